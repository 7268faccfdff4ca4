package store

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// migrations is a small history standing in for a real database's (the
// vault's and the journal's own live in their packages).
var migrations = []Migration{
	{Version: 1, Name: "test tables", Up: func(tx *gorm.DB) error {
		for _, stmt := range []string{
			`CREATE TABLE counter (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL)`,
			`INSERT INTO counter (id, value) VALUES (1, 0)`,
		} {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		return nil
	}},
}

func TestPragmasTakeEffect(t *testing.T) {
	db := openTemp(t)
	cases := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL
		{"busy_timeout", "5000"},
		{"foreign_keys", "1"},
	}
	for _, c := range cases {
		t.Run(c.pragma, func(t *testing.T) {
			var got string
			if err := db.Raw("PRAGMA " + c.pragma).Scan(&got).Error; err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("PRAGMA %s = %q, want %q", c.pragma, got, c.want)
			}
		})
	}
}

func TestFileModes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "yett.db")
	db, err := Open(path, migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	// A write makes sure -wal and -shm exist.
	if err := db.Exec(`UPDATE counter SET value = value + 1`).Error; err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	if _, err := os.Stat(path + ".creating"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary creation file left behind: %v", err)
	}
}

func TestSchemaVersionAndReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "yett.db")
	for i := 0; i < 2; i++ {
		db, err := Open(path, migrations)
		if err != nil {
			t.Fatal(err)
		}
		v, err := SchemaVersion(db)
		if err != nil {
			t.Fatal(err)
		}
		if v != migrations[len(migrations)-1].Version {
			t.Fatalf("schema version %d", v)
		}
		Close(db)
	}
	if backups(t, dir) != nil {
		t.Fatalf("no migration was pending, but a backup was written: %v", backups(t, dir))
	}
}

func TestBackupBeforePendingMigration(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "yett.db")
	db, err := open(path, migrations)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`UPDATE counter SET value = 41`).Error; err != nil {
		t.Fatal(err)
	}
	Close(db)

	next := append(append([]Migration(nil), migrations...), Migration{
		Version: 2, Name: "test step",
		Up: func(tx *gorm.DB) error {
			return tx.Exec(`UPDATE counter SET value = 99`).Error
		},
	})
	db, err = open(path, next)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	if v, _ := SchemaVersion(db); v != 2 {
		t.Fatalf("schema version %d, want 2", v)
	}
	bs := backups(t, dir)
	if len(bs) != 1 || !strings.Contains(bs[0], ".bak-v1-") {
		t.Fatalf("backups %v, want one yett.db.bak-v1-*", bs)
	}
	fi, err := os.Stat(bs[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v", fi.Mode().Perm())
	}
	// The backup is a working database holding the state before migration 2.
	old, err := connect(bs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer Close(old)
	if v, epoch := versionAndEpoch(t, old); v != 1 || epoch != 41 {
		t.Fatalf("backup at version %d epoch %d, want 1 and 41", v, epoch)
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "yett.db")
	db, err := open(path, migrations)
	if err != nil {
		t.Fatal(err)
	}
	Close(db)
	bad := append(append([]Migration(nil), migrations...), Migration{
		Version: 2, Name: "fails halfway",
		Up: func(tx *gorm.DB) error {
			if err := tx.Exec(`UPDATE counter SET value = 7`).Error; err != nil {
				return err
			}
			return errors.New("boom")
		},
	})
	if _, err := open(path, bad); err == nil || !strings.Contains(err.Error(), "migration 2") {
		t.Fatalf("err = %v", err)
	}
	db, err = open(path, migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(db)
	if v, epoch := versionAndEpoch(t, db); v != 1 || epoch != 0 {
		t.Fatalf("after failed migration: version %d epoch %d", v, epoch)
	}
}

func TestDamagedFilesAreReportedAndUntouched(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.db")
	db, err := Open(good, migrations)
	if err != nil {
		t.Fatal(err)
	}
	Close(db)
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":       {},
		"short":       goodBytes[:50],
		"not sqlite":  bytes.Repeat([]byte("x"), 8192),
		"half pages":  goodBytes[:len(goodBytes)/2],
		"one page":    goodBytes[:4096],
		"page broken": corruptPage(goodBytes),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "yett.db")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, migrations)
			if err == nil {
				Close(db)
				t.Fatal("Open accepted a damaged file")
			}
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("err = %v, want ErrDamaged", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, content) {
				t.Fatal("Open modified a damaged file")
			}
		})
	}
}

// corruptPage overwrites the b-tree page header of the last page.
func corruptPage(b []byte) []byte {
	c := bytes.Clone(b)
	last := len(c) - 4096
	for i := last; i < last+16; i++ {
		c[i] = 0xff
	}
	return c
}

func openTemp(t *testing.T) *gorm.DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "yett.db"), migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Close(db) })
	return db
}

func backups(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.bak-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func versionAndEpoch(t *testing.T, db *gorm.DB) (version, epoch int) {
	t.Helper()
	version, err := SchemaVersion(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Raw(`SELECT value FROM counter`).Scan(&epoch).Error; err != nil {
		t.Fatal(err)
	}
	return version, epoch
}

// TestNoSQLLogging: a failing statement whose bound value is a canary
// prints nothing to stdout or stderr (gorm's default logger would print
// the SQL with its values).
func TestNoSQLLogging(t *testing.T) {
	db := openTemp(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	err = db.Exec(`INSERT INTO no_such_table (x) VALUES (?)`, "CANARY-sql-log").Error
	db.Exec(`UPDATE counter SET value = ? WHERE id = 1`, 1)
	os.Stdout, os.Stderr = stdout, stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if err == nil {
		t.Fatal("the bad statement succeeded")
	}
	if len(out) != 0 {
		t.Fatalf("store printed: %q", out)
	}
	if strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("the error carries the bound value: %v", err)
	}
}

func TestUnixSecondsKeepsTheZeroTime(t *testing.T) {
	if UnixSeconds(time.Time{}) != 0 || !FromUnixSeconds(0).IsZero() {
		t.Fatal("the zero time is not kept as 0")
	}
	at := time.Date(2026, 12, 2, 6, 30, 0, 0, time.FixedZone("CET", 3600))
	if got := FromUnixSeconds(UnixSeconds(at)); !got.Equal(at) || got.Location() != time.UTC {
		t.Fatalf("%v read back as %v", at, got)
	}
}
