package vault

import (
	"encoding/hex"
	"errors"
	"fmt"
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

func (v *Vault) openKeyring() (KeyStore, error) {
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

func (v *Vault) setKeyringNote(s string) {
	v.mu.Lock()
	v.keyringNote = s
	v.mu.Unlock()
}

// storeKeyringKey puts a fresh random key in the OS keyring and returns the
// data key wrapped by it. Called without v.mu.
func (v *Vault) storeKeyringKey(vaultID [vaultIDLen]byte, dataKey []byte) ([]byte, error) {
	kr, err := v.openKeyring()
	if err != nil {
		return nil, err
	}
	kk := randomBytes(keyLen)
	defer clear(kk)
	err = kr.Set(keyringItemName(vaultID), "Yett vault unlock key", kk)
	if err != nil {
		v.setKeyringNote("could not store the key in the OS keyring: " + err.Error())
		return nil, fmt.Errorf("%w: storing the key failed: %v", ErrKeyringUnavailable, err)
	}
	v.setKeyringNote("")
	return wrapKey(kk, dataKey, keyringWrapAD(vaultID)), nil
}

func (v *Vault) removeKeyringKey(vaultID [vaultIDLen]byte) error {
	kr, err := v.openKeyring()
	if err != nil {
		return err
	}
	if err := kr.Remove(keyringItemName(vaultID)); err != nil && !errors.Is(err, ErrKeyNotFound) {
		return fmt.Errorf("vault: removing the key from the OS keyring: %w", err)
	}
	return nil
}

// UnlockWithKeyring unlocks with the key kept in the OS keyring.
//
// Errors: ErrKeyringNotEnabled, ErrKeyringUnavailable (no keyring could be
// opened), ErrKeyringKeyMissing (the item is gone or no longer opens this
// vault; the epoch advances because the protected session was lost), and
// the errors of Unlock except the passphrase ones. On any keyring error the
// caller falls back to Unlock with the passphrase, which still works.
func (v *Vault) UnlockWithKeyring() error {
	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	v.mu.Lock()
	if err := v.usable(); !errors.Is(err, ErrLocked) {
		v.mu.Unlock()
		return err
	}
	wrap, vaultID := v.keyringWrap, v.hdr.VaultID
	v.mu.Unlock()
	if wrap == nil {
		return ErrKeyringNotEnabled
	}
	kr, err := v.openKeyring()
	if err != nil {
		return err
	}
	kk, err := kr.Get(keyringItemName(vaultID))
	if errors.Is(err, ErrKeyNotFound) {
		return v.keyringKeyLost("the vault's key is not in the OS keyring")
	}
	if err != nil {
		v.setKeyringNote("reading the OS keyring failed: " + err.Error())
		return fmt.Errorf("%w: reading the key failed: %v", ErrKeyringUnavailable, err)
	}
	dataKey, err := unwrapKey(kk, wrap, keyringWrapAD(vaultID))
	clear(kk)
	if err != nil {
		return v.keyringKeyLost("the key in the OS keyring does not open this vault")
	}
	defer clear(dataKey)
	v.setKeyringNote("")
	return v.finishUnlock(dataKey, "the OS keyring")
}

// keyringKeyLost records the loss of the keyring session: a new epoch,
// announced as "changed", and a note for the UI.
func (v *Vault) keyringKeyLost(note string) error {
	v.mu.Lock()
	v.keyringNote = note + "; unlock with the passphrase, then turn keyring unlock on again"
	saved, err := v.moveEpoch(nil)
	v.enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: "keyring key missing", EpochNotSaved: !saved})
	v.mu.Unlock()
	v.deliver()
	return errors.Join(ErrKeyringKeyMissing, err)
}

// EnableKeyring turns keyring unlock on (a new random key goes into the OS
// keyring and the data key is wrapped by it) or off (the wrap is deleted
// from the vault first, then the item from the keyring). Unlocked only.
// Errors: ErrLocked, ErrKeyringUnavailable.
func (v *Vault) EnableKeyring(on bool) error {
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
		w, err := v.storeKeyringKey(vaultID, dataKey)
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
	v.enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: fmt.Sprintf("keyring unlock turned %s", map[bool]string{true: "on", false: "off"}[on])})
	v.mu.Unlock()
	v.deliver()
	if !on {
		return v.removeKeyringKey(vaultID)
	}
	return nil
}
