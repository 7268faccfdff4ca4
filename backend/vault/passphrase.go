package vault

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"unicode/utf8"

	"gorm.io/gorm"
)

// PassphraseChange says what ChangePassphrase did besides the passphrase.
type PassphraseChange struct {
	// KeyringRewrapped: keyring unlock was on and stays on, under a new
	// random key in the OS keyring (the item that held the old one was
	// replaced).
	KeyringRewrapped bool
	// KeyringCleared: keyring unlock was on but the keyring could not take
	// the new key (unavailable, refused, or the person stopped waiting), so
	// keyring unlock is now off; turn it on again from the settings.
	KeyringCleared bool
}

// ChangePassphrase replaces the passphrase that protects the vault. It
// asks for the current one (an unlocked vault left on screen is not enough
// to take it over), derives a key from the new one with a new salt and the
// current default Argon2id parameters, wraps the same data key under it and
// writes the new header in one transaction. From then on the old passphrase
// opens nothing in this file; a copy of the file taken before (a backup)
// still opens with the old one, and since the data key does not change,
// whoever opened such a copy holds the key to this file too: after a
// suspected leak of the passphrase together with a copy of the file,
// rotate the credentials as well.
//
// If keyring unlock is on, the data key is wrapped again under a new random
// key stored in the OS keyring, so an old keyring item no longer opens the
// file; if the keyring cannot take it (or ctx ends while it shows its own
// dialog) keyring unlock is turned off instead, and the result says so.
// The session stays unlocked and the epoch does not move: agents' approvals
// are not about the passphrase.
//
// Both passphrases are zeroed. A wrong current passphrase counts as a
// failed unlock (the same throttle).
//
// Errors: ErrLocked, ErrWrongPassphrase, *ThrottledError, ErrWeakPassphrase,
// ErrInvalid (the new passphrase is the current one).
func (v *Vault) ChangePassphrase(ctx context.Context, current, next Passphrase) (PassphraseChange, error) {
	defer clear(current)
	defer clear(next)
	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return PassphraseChange{}, err
	}
	if _, err := v.session().throttled(); err != nil {
		v.mu.Unlock()
		return PassphraseChange{}, err
	}
	if err := v.refreshHeader(); err != nil {
		v.mu.Unlock()
		return PassphraseChange{}, err
	}
	old, hadKeyring := v.hdr, v.keyringWrap != nil
	v.mu.Unlock()

	if utf8.RuneCount(next) < MinPassphraseChars {
		return PassphraseChange{}, ErrWeakPassphrase
	}
	if subtle.ConstantTimeCompare(current, next) == 1 {
		return PassphraseChange{}, fmt.Errorf("%w: the new passphrase is the same as the current one", ErrInvalid)
	}
	kek := passphraseKey(current, old.Salt, old.KDF)
	dataKey, err := unwrapKey(kek, old.Wrapped, passphraseWrapAD(old))
	clear(kek)
	if err != nil {
		v.mu.Lock()
		_, ferr := recordFailure(v.db, v.opts.Now())
		v.mu.Unlock()
		return PassphraseChange{}, errors.Join(ErrWrongPassphrase, ferr)
	}
	defer clear(dataKey)

	h := &header{VaultID: old.VaultID, KDF: v.opts.KDF, Salt: randomBytes(32)}
	kek = passphraseKey(next, h.Salt, h.KDF)
	h.Wrapped = wrapKey(kek, dataKey, passphraseWrapAD(h))
	clear(kek)

	var res PassphraseChange
	var keyringWrap []byte
	if hadKeyring {
		// Stored before the header is written: if the disk then refuses the
		// header, the item no longer matches the old wrap and keyring
		// unlock reports its key missing (the old passphrase still works).
		w, err := v.keyring().storeKeyringKey(ctx, h.VaultID, dataKey)
		if err == nil {
			keyringWrap, res.KeyringRewrapped = w, true
		} else {
			res.KeyringCleared = true
		}
	}

	v.mu.Lock()
	if err := v.usable(); err != nil || v.hdr != old {
		// Locked (or replaced) while the key was derived: the change is
		// dropped, as the person will see from the error.
		v.mu.Unlock()
		if err == nil {
			err = ErrLocked
		}
		return PassphraseChange{}, err
	}
	err = v.db.Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(`UPDATE vault_meta SET header = ?, keyring_wrap = ? WHERE id = 1`, h.encode(), keyringWrap)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errors.New("the header row is gone")
		}
		return resetThrottle(tx)
	})
	if err != nil {
		v.mu.Unlock()
		return PassphraseChange{}, fmt.Errorf("vault: saving the new passphrase: %w", err)
	}
	v.hdr, v.keyringWrap = h, keyringWrap
	reason := "passphrase changed"
	switch {
	case res.KeyringRewrapped:
		reason += "; the keyring key was replaced"
	case res.KeyringCleared:
		reason += "; keyring unlock turned off"
		v.keyringNote = "keyring unlock was turned off when the passphrase changed, because the keyring could not take the new key; turn it on again"
	}
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: reason, Change: ChangePassphrase})
	v.mu.Unlock()
	v.session().deliver()
	return res, nil
}
