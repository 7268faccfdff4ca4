package vault

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"unicode/utf8"

	"gorm.io/gorm"
)

// MinPassphraseChars is the shortest passphrase Create accepts, counted in
// characters (not bytes) so that it means the same as the setup screen's rule.
const MinPassphraseChars = 12

// Create sets up a new vault protected by passphrase and, if useKeyring,
// also by a random key stored in the OS keyring. It leaves the vault
// unlocked and announces "created". It zeroes passphrase.
//
// Errors: ErrAlreadyInitialised unless the vault is uninitialised,
// ErrWeakPassphrase, ErrKeyringUnavailable (nothing was created; retry
// without the keyring).
func (v *Vault) Create(passphrase Passphrase, useKeyring bool) error {
	return v.CreateContext(context.Background(), passphrase, useKeyring)
}

// CreateContext is Create whose wait for the OS keyring (which may show a
// dialog of its own) ends with ctx: then nothing is created, the error is
// ErrKeyringCancelled, and a key the keyring stores later is removed again.
func (v *Vault) CreateContext(ctx context.Context, passphrase Passphrase, useKeyring bool) error {
	defer clear(passphrase)
	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	v.mu.Lock()
	err := v.usable()
	v.mu.Unlock()
	if err != ErrNotInitialised {
		if err == nil || errors.Is(err, ErrLocked) {
			return ErrAlreadyInitialised
		}
		return err
	}
	if utf8.RuneCount(passphrase) < MinPassphraseChars {
		return ErrWeakPassphrase
	}

	h := &header{KDF: v.opts.KDF, Salt: randomBytes(32)}
	copy(h.VaultID[:], randomBytes(vaultIDLen))
	dataKey := randomBytes(keyLen)
	defer clear(dataKey)
	kek := passphraseKey(passphrase, h.Salt, h.KDF)
	h.Wrapped = wrapKey(kek, dataKey, passphraseWrapAD(h))
	clear(kek)

	var keyringWrap []byte
	if useKeyring {
		w, err := v.keyring().storeKeyringKey(ctx, h.VaultID, dataKey)
		if err != nil {
			return err
		}
		keyringWrap = w
	}

	keys := deriveSessionKeys(dataKey, h.VaultID)
	auditKey, err := makeAuditKey(keys, h.VaultID)
	if err != nil {
		keys.wipe()
		return err
	}
	v.mu.Lock()
	if err := v.usable(); err != ErrNotInitialised { // closed meanwhile
		v.mu.Unlock()
		keys.wipe()
		return err
	}
	_, err = v.session().advanceEpoch(func(tx *gorm.DB, next uint64) error {
		if err := auditKey.insert(tx); err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO vault_meta (id, header, keyring_wrap, manifest) VALUES (1, ?, ?, ?)`,
			h.encode(), keyringWrap, encodeManifest(keys, h.VaultID, &manifest{Epoch: next, Records: []recordRef{auditKey.ref}})).Error
	})
	if err != nil {
		v.mu.Unlock()
		keys.wipe()
		if useKeyring {
			v.keyring().removeKeyringKey(context.Background(), h.VaultID)
		}
		return err
	}
	v.hdr, v.keyringWrap, v.auditRecipient = h, keyringWrap, auditKey.ref.ID
	v.session().becomeUnlocked(keys, map[string]recordRef{auditKey.ref.ID: auditKey.ref}, map[string]cachedCredential{}, nil)
	v.session().enqueue(Event{Kind: EventCreated, Epoch: v.epoch, Reason: "vault created"})
	v.mu.Unlock()
	v.session().deliver()
	return nil
}

// Unlock opens the vault with the passphrase and zeroes it. Unlocking an
// unlocked vault is a no-op.
//
// Errors: ErrWrongPassphrase (only the failure counter changed on disk),
// *ThrottledError (no attempt made), ErrDamaged (as *DamagedError naming
// the header, manifest or record), ErrNotInitialised.
func (v *Vault) Unlock(passphrase Passphrase) error {
	defer clear(passphrase)
	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	v.mu.Lock()
	if err := v.usable(); !errors.Is(err, ErrLocked) {
		v.mu.Unlock()
		return err
	}
	if _, err := v.session().throttled(); err != nil {
		v.mu.Unlock()
		return err
	}
	if err := v.refreshHeader(); err != nil {
		v.session().failHeader(err)
		v.mu.Unlock()
		return err
	}
	h := v.hdr
	v.mu.Unlock()

	kek := passphraseKey(passphrase, h.Salt, h.KDF)
	dataKey, err := unwrapKey(kek, h.Wrapped, passphraseWrapAD(h))
	clear(kek)
	if err != nil {
		v.mu.Lock()
		_, ferr := recordFailure(v.db, v.opts.Now())
		v.mu.Unlock()
		return errors.Join(ErrWrongPassphrase, ferr)
	}
	defer clear(dataKey)
	return v.session().finishUnlock(dataKey, "passphrase")
}

// failHeader: a header found damaged before an unlock leaves the vault
// damaged, as at open. v.mu held.
func (v *session) failHeader(err error) {
	var d *DamagedError
	if errors.As(err, &d) {
		v.state, v.damaged = StateDamaged, d
	}
}

// finishUnlock verifies every record against the manifest, then commits
// the new epoch and manifest, and announces "unlocked". Damage found here
// leaves the vault damaged and the file untouched.
func (v *session) finishUnlock(dataKey []byte, how string) error {
	v.mu.Lock()
	if err := v.usable(); !errors.Is(err, ErrLocked) {
		v.mu.Unlock()
		return err
	}
	keys := deriveSessionKeys(dataKey, v.hdr.VaultID)
	got, err := v.verifyAll(keys)
	if err != nil {
		keys.wipe()
		var d *DamagedError
		if errors.As(err, &d) {
			v.state, v.damaged = StateDamaged, d
		}
		v.mu.Unlock()
		return err
	}
	// A vault made before audit keys existed gets one with this unlock's
	// manifest, in the same transaction.
	refs := got.refs
	var auditKey *newAuditKey
	if _, ok := auditKeyRef(refs); !ok {
		k, err := makeAuditKey(keys, v.hdr.VaultID)
		if err != nil {
			keys.wipe()
			v.mu.Unlock()
			return err
		}
		auditKey = &k
		refs[k.ref.ID] = k.ref
	}
	_, err = v.advanceEpoch(func(tx *gorm.DB, next uint64) error {
		if auditKey != nil {
			if err := auditKey.insert(tx); err != nil {
				return err
			}
		}
		if err := writeManifest(tx, keys, v.hdr.VaultID, next, refs); err != nil {
			return err
		}
		return resetThrottle(tx)
	})
	if err != nil {
		keys.wipe()
		v.mu.Unlock()
		return err
	}
	if ref, ok := auditKeyRef(refs); ok {
		v.auditRecipient = ref.ID
	}
	v.becomeUnlocked(keys, refs, got.creds, got.settings)
	v.hosts, v.servers = got.hosts, got.servers
	v.enqueue(Event{Kind: EventUnlocked, Epoch: v.epoch, Reason: "unlocked with " + how})
	v.mu.Unlock()
	v.deliver()
	return nil
}

// becomeUnlocked installs the session; v.mu held.
func (v *session) becomeUnlocked(keys *sessionKeys, refs map[string]recordRef, creds map[string]cachedCredential, settings *settingsRecord) {
	v.keys, v.refs, v.creds, v.removed = keys, refs, creds, nil
	v.state, v.damaged = StateUnlocked, nil
	v.autoLock, v.controls = v.opts.AutoLockAfter, nil
	if settings != nil {
		v.autoLock, v.controls = settings.AutoLockAfter, settings.Controls
	}
	v.backup = backupFromSettings(settings)
	v.idle().restartIdleTimer()
}

// Lock wipes the data key and derived keys, commits a new epoch and
// announces one "locked" event with reason. Locking a vault that is not
// unlocked does nothing and announces nothing. The keys are wiped and the
// state is locked even if committing the epoch fails: the epoch then moves
// in memory, the event says EpochNotSaved, and the error wraps
// ErrEpochNotSaved, so the failure is visible to whoever locked and to the
// audit log.
func (v *Vault) Lock(reason string) error {
	v.mu.Lock()
	if v.closed || v.state != StateUnlocked {
		v.mu.Unlock()
		return nil
	}
	err := v.session().lockLocked(reason)
	v.mu.Unlock()
	v.session().deliver()
	return err
}

// lockLocked locks with v.mu held and queues the event.
func (v *session) lockLocked(reason string) error {
	keys, refs := v.keys, v.refs
	saved, err := v.moveEpoch(func(tx *gorm.DB, next uint64) error {
		return writeManifest(tx, keys, v.hdr.VaultID, next, refs)
	})
	v.dropSession()
	v.state = StateLocked
	v.enqueue(Event{Kind: EventLocked, Epoch: v.epoch, Reason: reason, EpochNotSaved: !saved})
	return err
}

// dropSession wipes keys and forgets decrypted metadata; v.mu held.
func (v *session) dropSession() {
	v.keys.wipe()
	v.keys, v.refs, v.creds, v.removed = nil, nil, nil, nil
	v.hosts, v.servers = nil, nil
	v.idle().stopIdleTimer()
	v.deadline = timeZero
}

// loseSession handles damage found while unlocked: the session ends, the
// epoch advances (a counter update, not a repair: the damaged record is
// left as it is) and the vault stays damaged. v.mu held.
func (v *session) loseSession(d *DamagedError) {
	saved, _ := v.moveEpoch(nil)
	v.dropSession()
	v.state, v.damaged = StateDamaged, d
	v.enqueue(Event{Kind: EventLocked, Epoch: v.epoch, Reason: "vault damaged: " + d.Where, EpochNotSaved: !saved})
}

func writeManifest(tx *gorm.DB, keys *sessionKeys, vaultID [vaultIDLen]byte, epoch uint64, refs map[string]recordRef) error {
	m := &manifest{Epoch: epoch, Records: make([]recordRef, 0, len(refs))}
	for _, r := range refs {
		m.Records = append(m.Records, r)
	}
	sort.Slice(m.Records, func(i, j int) bool { return m.Records[i].ID < m.Records[j].ID })
	res := tx.Exec(`UPDATE vault_meta SET manifest = ? WHERE id = 1`, encodeManifest(keys, vaultID, m))
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("vault: the header row is gone")
	}
	return nil
}
