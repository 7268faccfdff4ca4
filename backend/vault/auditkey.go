package vault

import (
	"errors"
	"fmt"
	"strings"

	"filippo.io/age"
	"gorm.io/gorm"
)

// The audit key is an X25519 age identity. The audit log is encrypted to its
// public half, which must be known while the vault is locked (the gateway
// writes blind); its private half must only exist while the vault is
// unlocked.
//
// It is one sealed record of kind "audit_key" whose plaintext is the identity
// string and whose record id is the public recipient ("age1..."). The id is
// what makes the recipient readable while locked: the manifest, which any
// locked vault parses, lists every record's id and kind. It is not trusted
// while locked, only used; at unlock the manifest MAC proves the id is the
// one this vault wrote, the record's associated data binds the id to the
// ciphertext, and the decrypted identity must have exactly that recipient.
// A recipient swapped in the file is therefore found at the next unlock, as
// damage, like any other altered record.
const kindAuditKey = "audit_key"

// ErrNoAuditKey is returned by AuditRecipient for a vault that has no audit
// key yet: one that is not set up, or was created before audit keys existed
// and has not been unlocked since (the first unlock adds one).
var ErrNoAuditKey = errors.New("vault: no audit key yet; unlock the vault once to create it")

// AuditRecipient returns the public age recipient ("age1...") the audit log
// is encrypted to. It works while locked. Until the next unlock the value is
// as the file says; the unlock authenticates it (see kindAuditKey).
//
// Errors: ErrNoAuditKey, ErrClosed, ErrDamaged.
func (v *Vault) AuditRecipient() (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case v.closed:
		return "", ErrClosed
	case v.state == StateDamaged:
		return "", v.damaged
	case v.auditRecipient == "":
		return "", ErrNoAuditKey
	}
	return v.auditRecipient, nil
}

// AuditIdentity returns the private audit key, read and authenticated from
// the file now. The vault does not keep the identity in memory between calls.
//
// The caller must drop the identity as soon as it has read what it needs and
// must not keep it past a lock: age gives no way to wipe it, so the
// guarantee that no private audit key is in memory while the vault is locked
// holds only if callers do not hold on to it (the garbage collector reclaims
// it; nothing zeroes it).
//
// Errors: ErrLocked, ErrNotInitialised, ErrNoAuditKey, ErrClosed, ErrDamaged
// (the record no longer authenticates: the session is lost).
func (v *Vault) AuditIdentity() (*age.X25519Identity, error) {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return nil, err
	}
	ref, ok := auditKeyRef(v.refs)
	if !ok {
		v.mu.Unlock()
		return nil, ErrNoAuditKey
	}
	id, err := v.session().readAuditKey(ref)
	v.mu.Unlock()
	if err != nil {
		v.session().deliver()
		return nil, err
	}
	return id, nil
}

// readAuditKey reads and opens the audit key record; v.mu held, unlocked.
func (v *session) readAuditKey(ref recordRef) (*age.X25519Identity, error) {
	var id *age.X25519Identity
	err := v.readRecord(ref, func(pt []byte) (err error) {
		id, err = decodeAuditKey(ref.ID, pt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return id, nil
}

// decodeAuditKey parses an audit key record's plaintext and checks that its
// public half is the record id. Errors never quote the plaintext.
func decodeAuditKey(recordID string, plaintext []byte) (*age.X25519Identity, error) {
	s := string(plaintext)
	if !strings.HasPrefix(s, "AGE-SECRET-KEY-1") || len(s) > 128 {
		return nil, errors.New("the audit key record does not hold an age X25519 identity")
	}
	id, err := age.ParseX25519Identity(s)
	if err != nil {
		return nil, errors.New("the audit key record holds a malformed age identity")
	}
	if id.Recipient().String() != recordID {
		return nil, errors.New("the audit key's public recipient does not match the private key sealed for it (the recipient was replaced)")
	}
	return id, nil
}

// auditKeyRef finds the audit key among the records. verifyAll guarantees
// there is at most one in a vault that unlocked.
func auditKeyRef(refs map[string]recordRef) (recordRef, bool) {
	for _, r := range refs {
		if r.Kind == kindAuditKey {
			return r, true
		}
	}
	return recordRef{}, false
}

// auditRecipientFromManifest reads the recipient from a manifest's record
// list while locked: unauthenticated until unlock, see kindAuditKey. More
// than one audit key is damage.
func auditRecipientFromManifest(refs []recordRef) (string, error) {
	found := ""
	for _, r := range refs {
		if r.Kind != kindAuditKey {
			continue
		}
		if found != "" {
			return "", &DamagedError{Where: "manifest", Reason: "it lists more than one audit key"}
		}
		found = r.ID
	}
	return found, nil
}

// checkAuditKeyRecord is verifyAll's check of an audit key record at unlock.
func checkAuditKeyRecord(ref recordRef, plaintext []byte, seen bool) error {
	if seen {
		return &DamagedError{Where: recordWhere(ref), Reason: "a second audit key record (there is only ever one)"}
	}
	if _, err := decodeAuditKey(ref.ID, plaintext); err != nil {
		return &DamagedError{Where: recordWhere(ref), Reason: err.Error()}
	}
	return nil
}

// newAuditKey is a freshly made audit key, sealed as a record, not yet stored.
type newAuditKey struct {
	ref    recordRef
	sealed []byte
}

// makeAuditKey makes a fresh audit key and seals it under keys.
func makeAuditKey(keys *sessionKeys, vaultID [vaultIDLen]byte) (newAuditKey, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return newAuditKey{}, fmt.Errorf("vault: making the audit key: %w", err)
	}
	ref := recordRef{ID: id.Recipient().String(), Kind: kindAuditKey, Version: 1}
	pt := []byte(id.String())
	sealed := sealRecord(keys, vaultID, ref, pt)
	clear(pt)
	return newAuditKey{ref: ref, sealed: sealed}, nil
}

// insert writes the sealed record inside tx; the caller writes the manifest
// that lists it in the same transaction.
func (k newAuditKey) insert(tx *gorm.DB) error {
	return tx.Exec(`INSERT INTO vault_records (id, kind, version, sealed) VALUES (?, ?, ?, ?)`,
		k.ref.ID, k.ref.Kind, int64(k.ref.Version), k.sealed).Error
}
