package vault

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/99designs/keyring"
)

// KeyringOpener opens the OS keyring holding the vault's keyring key.
// OSKeyring is the real one; its fields are all that differ per OS.
type KeyringOpener interface {
	OpenKeyring() (keyring.Keyring, error)
}

// OSKeyring opens the first backend of Backends that works.
//
// What each protects against, honestly: macOS Keychain and Windows
// Credential Manager tie the item to the user's login (Keychain also to
// this app's code signature). A Linux Secret Service item (GNOME Keyring,
// KWallet) is readable by any process running as the same user once the
// login keyring is unlocked. keyctl keeps the key in the kernel, readable
// by the same user's processes, and loses it at reboot. On Linux the
// passphrase is the strong option; the keyring is convenience.
//
// The file backend is never used: it is only as strong as the password it
// prompts for, and it would be a second, weaker vault.
type OSKeyring struct {
	Backends    []keyring.BackendType
	ServiceName string
	// KeyCtlScope is the kernel keyring to use ("user" survives logouts
	// while any process of the user lives; "session" ends with the login).
	KeyCtlScope string
}

// DefaultKeyring returns the OSKeyring the app uses.
func DefaultKeyring() OSKeyring {
	return OSKeyring{
		Backends: []keyring.BackendType{
			keyring.KeychainBackend, keyring.WinCredBackend, keyring.SecretServiceBackend,
			keyring.KWalletBackend, keyring.KeyCtlBackend,
		},
		ServiceName: "yett",
		KeyCtlScope: "user",
	}
}

// OpenKeyring tries each allowed backend in order and reports every
// backend's failure if none opens.
func (o OSKeyring) OpenKeyring() (keyring.Keyring, error) {
	var reasons []string
	available := map[keyring.BackendType]bool{}
	for _, b := range keyring.AvailableBackends() {
		available[b] = true
	}
	for _, b := range o.Backends {
		if b == keyring.FileBackend || b == keyring.PassBackend {
			continue
		}
		if !available[b] {
			continue
		}
		kr, err := keyring.Open(keyring.Config{
			AllowedBackends:          []keyring.BackendType{b},
			ServiceName:              o.ServiceName,
			KeychainTrustApplication: true,
			KeyCtlScope:              o.KeyCtlScope,
			KWalletAppID:             o.ServiceName,
			KWalletFolder:            o.ServiceName,
			LibSecretCollectionName:  "login",
			WinCredPrefix:            o.ServiceName,
		})
		if err == nil {
			return kr, nil
		}
		reasons = append(reasons, fmt.Sprintf("%s: %v", b, err))
	}
	if len(reasons) == 0 {
		return nil, errors.New("no supported keyring backend on this system")
	}
	return nil, errors.New(strings.Join(reasons, "; "))
}

func keyringItemName(vaultID [vaultIDLen]byte) string {
	return "vault-" + hex.EncodeToString(vaultID[:])
}

func (v *Vault) openKeyring() (keyring.Keyring, error) {
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
	err = kr.Set(keyring.Item{
		Key:         keyringItemName(vaultID),
		Data:        kk,
		Label:       "Yett vault unlock key",
		Description: "Unlocks the Yett vault without its passphrase",
	})
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
	if err := kr.Remove(keyringItemName(vaultID)); err != nil && !errors.Is(err, keyring.ErrKeyNotFound) {
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
	item, err := kr.Get(keyringItemName(vaultID))
	if errors.Is(err, keyring.ErrKeyNotFound) {
		return v.keyringKeyLost("the vault's key is not in the OS keyring")
	}
	if err != nil {
		v.setKeyringNote("reading the OS keyring failed: " + err.Error())
		return fmt.Errorf("%w: reading the key failed: %v", ErrKeyringUnavailable, err)
	}
	dataKey, err := unwrapKey(item.Data, wrap, keyringWrapAD(vaultID))
	clear(item.Data)
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
	_, err := v.advanceEpoch(nil)
	v.enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: "keyring key missing"})
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
