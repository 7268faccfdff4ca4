package vault

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/store"
	"gorm.io/gorm"
)

// corruptFixture builds a closed vault with three credentials and a
// settings record at version 2, and returns a copy of the settings row at
// version 1 for rollback tests.
func corruptFixture(t *testing.T) (dir string, ids []string, oldSettings recordRow, removed recordRow) {
	t.Helper()
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	for i := 0; i < 3; i++ {
		c, err := v.Credentials().Add(sampleCredential(fmt.Sprintf("cred %d", i), fmt.Sprintf("CANARY-corrupt-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	gone, err := v.Credentials().Add(sampleCredential("removed", "CANARY-removed"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.SetAutoLockAfter(time.Hour); err != nil {
		t.Fatal(err)
	}
	oldSettings = readRow(t, v.db, settingsID)
	removed = readRow(t, v.db, gone.ID)
	if err := v.Credentials().Remove(gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := v.SetAutoLockAfter(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, ids, oldSettings, removed
}

func readRow(t *testing.T, db *gorm.DB, id string) recordRow {
	t.Helper()
	var rows []recordRow
	if err := db.Raw(`SELECT id, kind, version, sealed FROM vault_records WHERE id = ?`, id).Scan(&rows).Error; err != nil || len(rows) != 1 {
		t.Fatalf("reading row %s: %v", id, err)
	}
	return rows[0]
}

func tamper(t *testing.T, dir string, stmts ...func(db *gorm.DB) error) {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, FileName), schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if err := s(db); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(db); err != nil {
		t.Fatal(err)
	}
}

func sqlExec(sql string, args ...any) func(db *gorm.DB) error {
	return func(db *gorm.DB) error { return db.Exec(sql, args...).Error }
}

// xorBytes alters a blob column where it is sure to change: each byte at
// the given offsets (negative ones count from the end) is XORed with 0xff.
// Setting a byte to a constant instead leaves the blob as it was whenever
// that byte already held the constant, once in 256 runs. where selects one
// row ("id = ?" with args, or "1" for the one-row meta table).
func xorBytes(table, column, where string, offsets []int, args ...any) func(db *gorm.DB) error {
	return func(db *gorm.DB) error {
		var blobs [][]byte
		if err := db.Raw(`SELECT `+column+` FROM `+table+` WHERE `+where, args...).Scan(&blobs).Error; err != nil {
			return err
		}
		if len(blobs) != 1 {
			return fmt.Errorf("xorBytes: %d rows of %s match %q", len(blobs), table, where)
		}
		b := blobs[0]
		for _, at := range offsets {
			if at < 0 {
				at += len(b)
			}
			if at < 0 || at >= len(b) {
				return fmt.Errorf("xorBytes: offset %d outside a %d-byte %s.%s", at, len(b), table, column)
			}
			b[at] ^= 0xff
		}
		return db.Exec(`UPDATE `+table+` SET `+column+` = ? WHERE `+where, append([]any{b}, args...)...).Error
	}
}

func fileHash(t *testing.T, dir string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// expectDamaged opens the vault, expects damage (at Open or at Unlock)
// whose message contains want, and checks the file was not modified.
func expectDamaged(t *testing.T, dir string, want string) {
	t.Helper()
	before := fileHash(t, dir)
	v, err := Open(dir, testOptions(newFakeClock()))
	if err != nil {
		t.Fatalf("Open: %v (a damaged file must give a damaged Vault, not an error)", err)
	}
	var msg string
	if s := v.Status(); s.State == StateDamaged {
		msg = s.Damaged
		if err := v.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) {
			t.Errorf("Unlock on a damaged vault: %v", err)
		}
	} else {
		err := v.Unlock(pass(testPass))
		if !errors.Is(err, ErrDamaged) {
			t.Fatalf("Unlock: %v, want ErrDamaged", err)
		}
		msg = err.Error()
		if s := v.Status(); s.State != StateDamaged || s.Damaged != msg {
			t.Errorf("status after damaged unlock: %+v", s)
		}
		if err := v.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) {
			t.Errorf("second Unlock: %v", err)
		}
	}
	if !strings.Contains(msg, want) {
		t.Errorf("damage message %q does not contain %q", msg, want)
	}
	if strings.Contains(msg, "CANARY") {
		t.Errorf("damage message leaks a secret: %q", msg)
	}
	v.Close()
	if fileHash(t, dir) != before {
		t.Error("the damaged file was modified")
	}
}

func TestCorruptRecords(t *testing.T) {
	flip := func(id string) func(db *gorm.DB) error {
		return func(db *gorm.DB) error {
			row := readRow(t, db, id)
			row.Sealed[len(row.Sealed)/2] ^= 0x01
			return db.Exec(`UPDATE vault_records SET sealed = ? WHERE id = ?`, row.Sealed, id).Error
		}
	}
	cases := []struct {
		name   string
		tamper func(dir string, ids []string, old, removed recordRow)
		want   func(ids []string) string
	}{
		{"flipped ciphertext byte", func(dir string, ids []string, _, _ recordRow) {
			tamper(t, dir, flip(ids[1]))
		}, func(ids []string) string { return "record " + ids[1] + " (credential): it does not authenticate" }},
		{"envelope version byte", func(dir string, ids []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`UPDATE vault_records SET sealed = x'07' || substr(sealed, 2) WHERE id = ?`, ids[0]))
		}, func(ids []string) string { return "record " + ids[0] + " (credential)" }},
		{"kind column edited", func(dir string, ids []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`UPDATE vault_records SET kind = 'settingz' WHERE id = ?`, ids[2]))
		}, func(ids []string) string { return "record " + ids[2] + " (settingz): its kind column" }},
		{"version column edited", func(dir string, ids []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`UPDATE vault_records SET version = 2 WHERE id = ?`, ids[0]))
		}, func(ids []string) string { return "record " + ids[0] + " (credential): it is at version 2" }},
		{"version and manifest kept, ciphertext from other row", func(dir string, ids []string, _, _ recordRow) {
			tamper(t, dir, func(db *gorm.DB) error {
				a, b := readRow(t, db, ids[0]), readRow(t, db, ids[1])
				if err := db.Exec(`UPDATE vault_records SET sealed = ? WHERE id = ?`, b.Sealed, a.ID).Error; err != nil {
					return err
				}
				return db.Exec(`UPDATE vault_records SET sealed = ? WHERE id = ?`, a.Sealed, b.ID).Error
			})
		}, func(ids []string) string {
			return "record " + min(ids[0], ids[1]) + " (credential): it does not authenticate"
		}},
		{"settings rolled back to an older version", func(dir string, _ []string, old, _ recordRow) {
			tamper(t, dir, sqlExec(`UPDATE vault_records SET version = ?, sealed = ? WHERE id = ?`, old.Version, old.Sealed, old.ID))
		}, func([]string) string {
			return "record settings (settings): it is at version 1 but the manifest expects 2 (an older copy"
		}},
		{"removed record restored", func(dir string, _ []string, _, removed recordRow) {
			tamper(t, dir, sqlExec(`INSERT INTO vault_records (id, kind, version, sealed) VALUES (?, ?, ?, ?)`, removed.ID, removed.Kind, removed.Version, removed.Sealed))
		}, func([]string) string { return "(credential): it is not in the manifest" }},
		{"record deleted", func(dir string, ids []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`DELETE FROM vault_records WHERE id = ?`, ids[2]))
		}, func(ids []string) string {
			return "record " + ids[2] + " (credential): it is listed in the manifest but missing"
		}},
		{"manifest deleted", func(dir string, _ []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`UPDATE vault_meta SET manifest = NULL`))
		}, func([]string) string { return "manifest: the manifest is missing" }},
		{"manifest byte flipped", func(dir string, _ []string, _, _ recordRow) {
			tamper(t, dir, xorBytes("vault_meta", "manifest", "1", []int{-1}))
		}, func([]string) string { return "manifest: its MAC does not verify" }},
		{"epoch rolled back", func(dir string, _ []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`UPDATE vault_epoch SET value = 1`))
		}, func([]string) string { return "epoch: the stored epoch 1 is behind" }},
		{"header byte flipped", func(dir string, _ []string, _, _ recordRow) {
			tamper(t, dir, xorBytes("vault_meta", "header", "1", []int{30}))
		}, func([]string) string { return "header: header checksum mismatch" }},
		{"header row deleted", func(dir string, _ []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`DELETE FROM vault_meta`))
		}, func([]string) string { return "header: the header row is missing but 5 records exist" }}, // 3 credentials, settings, audit key
		{"keyring wrap mangled", func(dir string, _ []string, _, _ recordRow) {
			tamper(t, dir, sqlExec(`UPDATE vault_meta SET keyring_wrap = x'0102'`))
		}, func([]string) string { return "keyring wrap" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, ids, old, removed := corruptFixture(t)
			c.tamper(dir, ids, old, removed)
			expectDamaged(t, dir, c.want(ids))
		})
	}
}

func TestTruncatedFile(t *testing.T) {
	dir, _, _, _ := corruptFixture(t)
	// Enough credentials that every page of the file is in use.
	v := openVault(t, dir, testOptions(newFakeClock()))
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		if _, err := v.Credentials().Add(sampleCredential(fmt.Sprintf("filler %d", i), "CANARY-"+strings.Repeat("f", 500))); err != nil {
			t.Fatal(err)
		}
	}
	v.Close()
	good, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 1, 50, 99, 100, 4096, len(good) / 3, len(good) / 2, len(good) - 4096} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, FileName), good[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			expectDamaged(t, d, "")
		})
	}
}

func TestDamageFoundWhileUnlockedEndsSession(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	ref, err := auditKeyRefOf(v)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	v.Subscribe(rec.add)
	epoch := v.Epoch()
	// Another writer alters the audit key's row under the running vault;
	// AuditIdentity reads it from the file.
	if err := xorBytes("vault_records", "sealed", "id = ?", []int{32}, ref)(v.db); err != nil {
		t.Fatal(err)
	}
	if id, err := v.AuditIdentity(); !errors.Is(err, ErrDamaged) || id != nil {
		t.Fatalf("AuditIdentity on an altered record: %v", err)
	}
	s := v.Status()
	if s.State != StateDamaged || s.Epoch <= epoch || !strings.Contains(s.Damaged, ref) {
		t.Fatalf("status %+v", s)
	}
	if k := rec.kinds(); len(k) != 1 || k[0] != EventLocked {
		t.Fatalf("events %v", k)
	}
	if _, err := v.Credentials().List(); !errors.Is(err, ErrDamaged) {
		t.Fatalf("list after damage: %v", err)
	}
}

// A credential row altered on disk while the vault is unlocked changes
// nothing that is sent: the secret comes from the record verified at
// unlock. The next unlock finds and names the damage.
func TestCredentialAlteredOnDiskWhileUnlocked(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	c, err := v.Credentials().Add(sampleCredential("x", "CANARY-live"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xorBytes("vault_records", "sealed", "id = ?", []int{32}, c.ID)(v.db); err != nil {
		t.Fatal(err)
	}
	_, secret, err := credentialAndSecret(v, apiRoot)
	if err != nil || string(secret.Bytes()) != "CANARY-live" {
		t.Fatalf("the verified secret: %v", err)
	}
	secret.Wipe()
	v.Close()
	v2, err := Open(dir, testOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	if err := v2.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), c.ID) {
		t.Fatalf("unlock after the row was altered: %v", err)
	}
}

func TestDamagedOpenDoesNotCreateSidecars(t *testing.T) {
	d := t.TempDir()
	junk := bytes.Repeat([]byte("not a database "), 500)
	if err := os.WriteFile(filepath.Join(d, FileName), junk, 0o600); err != nil {
		t.Fatal(err)
	}
	expectDamaged(t, d, "not a SQLite database")
}
