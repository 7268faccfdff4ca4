package vault

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// KeyringOpener opens the OS keyring that holds the vault's keyring key.
// The real one, over github.com/99designs/keyring, is oskeyring.Keyring;
// it lives in its own package so that programs importing the vault without
// wanting a keyring (the gateway, the CLI) do not link it: that library
// connects to the D-Bus session bus as soon as it is linked in.
type KeyringOpener interface {
	OpenKeyring() (KeyStore, error)
}

// KeyStore is the part of an OS keyring the vault uses.
type KeyStore interface {
	// Get returns the item's secret, or an error wrapping ErrKeyNotFound.
	Get(name string) ([]byte, error)
	Set(name, label string, secret []byte) error
	// Remove deletes the item; removing a missing item is not an error.
	Remove(name string) error
}

// ErrKeyNotFound is what a KeyStore returns for a missing item.
var ErrKeyNotFound = errors.New("vault: no such item in the OS keyring")

func keyringItemName(vaultID [vaultIDLen]byte) string {
	return "vault-" + hex.EncodeToString(vaultID[:])
}

func (v *keyringSlot) openKeyring() (KeyStore, error) {
	if v.opts.Keyring == nil {
		return nil, fmt.Errorf("%w (turned off in this configuration)", ErrKeyringUnavailable)
	}
	kr, err := v.opts.Keyring.OpenKeyring()
	if err != nil {
		v.setKeyringNote("no OS keyring is available: " + err.Error())
		return nil, fmt.Errorf("%w: %v", ErrKeyringUnavailable, err)
	}
	return kr, nil
}

func (v *keyringSlot) setKeyringNote(s string) {
	v.mu.Lock()
	v.keyringNote = s
	v.mu.Unlock()
}

// withKeyring runs op on the OS keyring without holding any of the vault's
// locks, and returns when op does or when ctx ends, whichever comes first.
// The system keyring may show a dialog of its own (to unlock the login
// keyring, to allow access) and wait for the person as long as it likes;
// the caller must not wait with it. After a cancellation op still runs to
// its end in the background, and then undo (if not nil) reverses what it
// did (removes the item it stored, wipes the key it read). keyringMu keeps
// one keyring operation, with its undo, at a time: a retry after a
// cancellation waits for the first to finish, so a late undo cannot remove
// what the retry stored.
//
// Errors: ErrKeyringCancelled, and op's.
func (v *keyringSlot) withKeyring(ctx context.Context, op func(KeyStore) error, undo func(KeyStore)) error {
	// The caller and the worker agree once on who owns the outcome: the
	// worker, when op finished first (its result stands), or the
	// cancellation (the worker then undoes what op did).
	var mu sync.Mutex
	finished, cancelled := false, false
	done := make(chan error, 1)
	go func() {
		v.keyringMu.Lock()
		defer v.keyringMu.Unlock()
		mu.Lock()
		skip := cancelled
		mu.Unlock()
		if skip {
			return
		}
		kr, err := v.openKeyring()
		if err == nil {
			err = op(kr)
		}
		mu.Lock()
		if cancelled {
			mu.Unlock()
			if err == nil && undo != nil {
				undo(kr)
			}
			return
		}
		finished = true
		mu.Unlock()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		mu.Lock()
		if finished {
			mu.Unlock()
			return <-done
		}
		cancelled = true
		mu.Unlock()
		return ErrKeyringCancelled
	}
}

// storeKeyringKey puts a fresh random key in the OS keyring and returns the
// data key wrapped by it. Called without v.mu.
func (v *keyringSlot) storeKeyringKey(ctx context.Context, vaultID [vaultIDLen]byte, dataKey []byte) ([]byte, error) {
	kk := randomBytes(keyLen)
	defer clear(kk)
	err := v.withKeyring(ctx, func(kr KeyStore) error {
		if err := kr.Set(keyringItemName(vaultID), "Yett vault unlock key", kk); err != nil {
			v.setKeyringNote("could not store the key in the OS keyring: " + err.Error())
			return fmt.Errorf("%w: storing the key failed: %v", ErrKeyringUnavailable, err)
		}
		return nil
	}, func(kr KeyStore) { kr.Remove(keyringItemName(vaultID)) })
	if err != nil {
		return nil, err
	}
	v.setKeyringNote("")
	return wrapKey(kk, dataKey, keyringWrapAD(vaultID)), nil
}

func (v *keyringSlot) removeKeyringKey(ctx context.Context, vaultID [vaultIDLen]byte) error {
	return v.withKeyring(ctx, func(kr KeyStore) error {
		if err := kr.Remove(keyringItemName(vaultID)); err != nil && !errors.Is(err, ErrKeyNotFound) {
			return fmt.Errorf("vault: removing the key from the OS keyring: %w", err)
		}
		return nil
	}, nil)
}

// UnlockWithKeyring is UnlockWithKeyringContext without a way to stop
// waiting for the keyring.
func (v *Vault) UnlockWithKeyring() error { return v.UnlockWithKeyringContext(context.Background()) }

// UnlockWithKeyringContext unlocks with the key kept in the OS keyring.
// While the keyring answers (it may show the person a dialog first) no lock
// of the vault is held: Status, a passphrase Unlock and everything else go
// on; ctx's end stops the wait (ErrKeyringCancelled) and the key, should it
// come later, is wiped unused.
//
// Errors: ErrKeyringNotEnabled, ErrKeyringUnavailable (no keyring could be
// opened), ErrKeyringKeyMissing (the item is gone or no longer opens this
// vault; the epoch advances because the protected session was lost),
// ErrKeyringCancelled, and the errors of Unlock except the passphrase ones.
// On any keyring error the caller falls back to Unlock with the passphrase,
// which still works.
func (v *Vault) UnlockWithKeyringContext(ctx context.Context) error {
	v.mu.Lock()
	if err := v.usable(); !errors.Is(err, ErrLocked) {
		v.mu.Unlock()
		return err
	}
	if err := v.refreshHeader(); err != nil {
		v.session().failHeader(err)
		v.mu.Unlock()
		return err
	}
	wrap, vaultID := v.keyringWrap, v.hdr.VaultID
	v.mu.Unlock()
	if wrap == nil {
		return ErrKeyringNotEnabled
	}
	var kk []byte
	missing := false
	err := v.keyring().withKeyring(ctx, func(kr KeyStore) error {
		k, err := kr.Get(keyringItemName(vaultID))
		if errors.Is(err, ErrKeyNotFound) {
			missing = true
			return nil
		}
		if err != nil {
			v.keyring().setKeyringNote("reading the OS keyring failed: " + err.Error())
			return fmt.Errorf("%w: reading the key failed: %v", ErrKeyringUnavailable, err)
		}
		kk = k
		return nil
	}, func(KeyStore) { clear(kk) })
	if err != nil {
		return err
	}
	if missing {
		return v.keyring().keyringKeyLost("the vault's key is not in the OS keyring")
	}
	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	v.mu.Lock()
	// The vault may have been unlocked with the passphrase, or keyring
	// unlock turned off, while the keyring answered.
	if err := v.usable(); !errors.Is(err, ErrLocked) {
		v.mu.Unlock()
		clear(kk)
		return err
	}
	if v.keyringWrap == nil || v.hdr.VaultID != vaultID {
		v.mu.Unlock()
		clear(kk)
		return ErrKeyringNotEnabled
	}
	wrap = v.keyringWrap
	v.mu.Unlock()
	dataKey, err := unwrapKey(kk, wrap, keyringWrapAD(vaultID))
	clear(kk)
	if err != nil {
		return v.keyring().keyringKeyLost("the key in the OS keyring does not open this vault")
	}
	defer clear(dataKey)
	v.keyring().setKeyringNote("")
	return v.session().finishUnlock(dataKey, "the OS keyring")
}

// keyringKeyLost records the loss of the keyring session: a new epoch,
// announced as "changed", and a note for the UI.
func (v *keyringSlot) keyringKeyLost(note string) error {
	v.mu.Lock()
	v.keyringNote = note + "; unlock with the passphrase, then turn keyring unlock on again"
	saved, err := v.session().moveEpoch(nil)
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: "keyring key missing", EpochNotSaved: !saved})
	v.mu.Unlock()
	v.session().deliver()
	return errors.Join(ErrKeyringKeyMissing, err)
}

// EnableKeyring is EnableKeyringContext without a way to stop waiting for
// the keyring.
func (v *Vault) EnableKeyring(on bool) error { return v.EnableKeyringContext(context.Background(), on) }

// EnableKeyringContext turns keyring unlock on (a new random key goes into
// the OS keyring and the data key is wrapped by it) or off (the wrap is
// deleted from the vault first, then the item from the keyring). Unlocked
// only. While the keyring answers no lock of the vault is held; ctx's end
// stops the wait, and a key stored after that is removed again.
// Errors: ErrLocked, ErrKeyringUnavailable, ErrKeyringCancelled.
func (v *Vault) EnableKeyringContext(ctx context.Context, on bool) error {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	vaultID := v.hdr.VaultID
	dataKey := append([]byte(nil), v.keys.data...)
	v.mu.Unlock()
	defer clear(dataKey)

	var wrap []byte
	if on {
		w, err := v.keyring().storeKeyringKey(ctx, vaultID, dataKey)
		if err != nil {
			return err
		}
		wrap = w
	}
	v.mu.Lock()
	if err := v.usable(); err != nil || v.hdr.VaultID != vaultID {
		v.mu.Unlock()
		return ErrLocked
	}
	if err := v.db.Exec(`UPDATE vault_meta SET keyring_wrap = ? WHERE id = 1`, wrap).Error; err != nil {
		v.mu.Unlock()
		return fmt.Errorf("vault: %w", err)
	}
	v.keyringWrap = wrap
	change := ChangeKeyringOff
	if on {
		change = ChangeKeyringOn
	}
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: fmt.Sprintf("keyring unlock turned %s", map[bool]string{true: "on", false: "off"}[on]), Change: change})
	v.mu.Unlock()
	v.session().deliver()
	if !on {
		return v.keyring().removeKeyringKey(ctx, vaultID)
	}
	return nil
}
