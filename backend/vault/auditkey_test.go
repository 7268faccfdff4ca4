package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"gorm.io/gorm"
)

func TestAuditKeyLifecycle(t *testing.T) {
	dir := t.TempDir()
	v := openVault(t, dir, testOptions(newFakeClock()))
	if _, err := v.AuditRecipient(); !errors.Is(err, ErrNoAuditKey) {
		t.Fatalf("uninitialised: %v, want ErrNoAuditKey", err)
	}
	if _, err := v.AuditIdentity(); !errors.Is(err, ErrNotInitialised) {
		t.Fatalf("uninitialised identity: %v", err)
	}
	if err := v.Create(pass(testPass), false); err != nil {
		t.Fatal(err)
	}
	recipient, err := v.AuditRecipient()
	if err != nil || !strings.HasPrefix(recipient, "age1") {
		t.Fatalf("recipient %q, %v", recipient, err)
	}
	id, err := v.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if id.Recipient().String() != recipient {
		t.Fatal("identity does not match the recipient")
	}
	secret := id.String()

	if err := v.Lock("test"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.AuditIdentity(); !errors.Is(err, ErrLocked) {
		t.Fatalf("locked identity: %v, want ErrLocked", err)
	}
	if got, err := v.AuditRecipient(); err != nil || got != recipient {
		t.Fatalf("locked recipient %q, %v", got, err)
	}

	// A fresh process knows the recipient before any unlock: blind write.
	v.Close()
	v = openVault(t, dir, testOptions(newFakeClock()))
	if got, err := v.AuditRecipient(); err != nil || got != recipient {
		t.Fatalf("reopened locked recipient %q, %v", got, err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	id2, err := v.AuditIdentity()
	if err != nil || id2.String() != secret {
		t.Fatalf("after unlock: the identity changed (%v)", err)
	}

	// Something encrypted blind to the recipient opens with the identity.
	r, _ := age.ParseX25519Recipient(recipient)
	var ct bytes.Buffer
	w, _ := age.Encrypt(&ct, r)
	w.Write([]byte("hello"))
	w.Close()
	if _, err := age.Decrypt(&ct, id2); err != nil {
		t.Fatalf("decrypt: %v", err)
	}
}

// The private key must never be in the database in plain text, in the main
// file, the WAL or the logical rows.
func TestAuditKeyCanary(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	id, err := v.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	secret := id.String()
	_, bech, _ := strings.Cut(secret, "AGE-SECRET-KEY-1")
	check := func(when string) {
		t.Helper()
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(filepath.Join(dir, FileName+suffix))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToUpper(b), []byte(bech)) {
				t.Errorf("%s: the private audit key is in %s in plain text", when, FileName+suffix)
			}
		}
		for table, rows := range dumpTables(t, dir) {
			if strings.Contains(strings.ToUpper(rows), bech) {
				t.Errorf("%s: the private audit key is in table %s", when, table)
			}
		}
	}
	check("unlocked")
	v.Lock("test")
	v.Close()
	check("closed")
}

func TestAuditKeyCreatedOnFirstUnlockOfOldVault(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	// Make the vault look like one created before audit keys existed.
	v.mu.Lock()
	ref, _ := auditKeyRef(v.refs)
	if err := v.deleteRecord(ref.ID); err != nil {
		t.Fatal(err)
	}
	v.mu.Unlock()
	v.Lock("test")
	v.Close()

	v = openVault(t, dir, testOptions(newFakeClock()))
	if _, err := v.AuditRecipient(); !errors.Is(err, ErrNoAuditKey) {
		t.Fatalf("old vault, locked: %v, want ErrNoAuditKey", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	recipient, err := v.AuditRecipient()
	if err != nil || recipient == ref.ID {
		t.Fatalf("after first unlock: %q, %v (want a new key)", recipient, err)
	}
	v.Lock("test")
	v.Close()
	v = openVault(t, dir, testOptions(newFakeClock()))
	if got, _ := v.AuditRecipient(); got != recipient {
		t.Fatalf("the new key was not kept: %q vs %q", got, recipient)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatalf("unlock with the added key: %v", err)
	}
}

// Swapping the public recipient in the file (so the blind writer encrypts to
// someone else's key) is found at the next unlock, as damage.
func TestAuditRecipientSwapDetected(t *testing.T) {
	other, _ := age.GenerateX25519Identity()
	otherRecipient := other.Recipient().String()
	cases := map[string]func(t *testing.T, dir, old string) func(db *gorm.DB) error{
		"manifest and row renamed": func(t *testing.T, dir, old string) func(db *gorm.DB) error {
			return func(db *gorm.DB) error {
				var man []byte
				if err := db.Raw(`SELECT manifest FROM vault_meta`).Row().Scan(&man); err != nil {
					return err
				}
				man = bytes.Replace(man, []byte(old), []byte(otherRecipient), 1)
				if err := db.Exec(`UPDATE vault_meta SET manifest = ?`, man).Error; err != nil {
					return err
				}
				return db.Exec(`UPDATE vault_records SET id = ? WHERE id = ?`, otherRecipient, old).Error
			}
		},
		"row renamed only": func(t *testing.T, dir, old string) func(db *gorm.DB) error {
			return sqlExec(`UPDATE vault_records SET id = ? WHERE id = ?`, otherRecipient, old)
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			v, dir := newUnlocked(t, testOptions(newFakeClock()))
			old, _ := v.AuditRecipient()
			v.Lock("test")
			v.Close()
			tamper(t, dir, mk(t, dir, old))
			expectDamaged(t, dir, "")
		})
	}
}

func TestDecodeAuditKeyRejectsMismatch(t *testing.T) {
	a, _ := age.GenerateX25519Identity()
	b, _ := age.GenerateX25519Identity()
	if _, err := decodeAuditKey(a.Recipient().String(), []byte(a.String())); err != nil {
		t.Fatalf("valid: %v", err)
	}
	_, err := decodeAuditKey(b.Recipient().String(), []byte(a.String()))
	if err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("mismatch: %v", err)
	}
	bad := "AGE-SECRET-KEY-1CANARYNOTAKEY"
	if _, err := decodeAuditKey(b.Recipient().String(), []byte(bad)); err == nil || strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("malformed: %v", err)
	}
}

func TestAuditKeyDuplicateRecordIsDamage(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	v.mu.Lock()
	k, err := makeAuditKey(v.keys, v.hdr.VaultID)
	if err != nil {
		t.Fatal(err)
	}
	refs := cloneRefs(v.refs)
	refs[k.ref.ID] = k.ref
	err = v.db.Transaction(func(tx *gorm.DB) error {
		if err := k.insert(tx); err != nil {
			return err
		}
		return writeManifest(tx, v.keys, v.hdr.VaultID, v.epoch, refs)
	})
	if err != nil {
		t.Fatal(err)
	}
	v.refs = refs
	v.mu.Unlock()
	v.Lock("test")
	if err := v.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) {
		t.Fatalf("two audit keys: %v, want ErrDamaged", err)
	}
}

func FuzzDecodeAuditKey(f *testing.F) {
	id, _ := age.GenerateX25519Identity()
	f.Add(id.Recipient().String(), []byte(id.String()))
	f.Add(id.Recipient().String(), []byte("AGE-SECRET-KEY-1"))
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, recipient string, pt []byte) {
		got, err := decodeAuditKey(recipient, pt)
		if err != nil {
			return
		}
		if got.Recipient().String() != recipient {
			t.Fatal("accepted an identity whose recipient differs from the record id")
		}
	})
}
