// Package store opens Yett's SQLite database and keeps its schema current.
//
// # Guarantees
//
//   - Every connection runs with WAL journaling, synchronous=FULL (a commit
//     is on disk before it returns), a 5 s busy timeout and foreign keys on.
//     A test reads the pragmas back, because a DSN typo is silently ignored.
//   - The database file and its -wal and -shm companions are mode 0600.
//   - A new database is built under a temporary name and renamed into place
//     only once its schema exists, so a crash during creation never leaves a
//     half-made file at the real path. A file at the real path that is not a
//     SQLite database, or fails SQLite's quick_check, is reported as
//     ErrDamaged and is never written to: repairing is the person's call.
//   - Migrations are numbered Go functions, each run in its own transaction
//     together with the schema_version update. Before the first pending
//     migration runs on an existing database, a backup copy is written next
//     to it and fsynced.
//   - gorm's logger is silenced: it would otherwise print SQL with bound
//     values, and some of those values are sealed secrets or key material.
package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// ErrDamaged reports a database file that exists but cannot be trusted as a
// SQLite database: wrong magic, truncated, or failing quick_check. The file
// has not been modified.
var ErrDamaged = errors.New("store: database file is damaged")

// Pragmas are applied by the driver to every new connection.
const Pragmas = "_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate"

const sqliteMagic = "SQLite format 3\x00"

// Open opens the database at path, creating it (with the schema history
// applied) if it does not exist, and applies pending migrations of history.
// Each database has its own history (the vault's, the journal's), so one
// never gets the other's tables. Errors wrapping ErrDamaged mean the file is
// there but unusable; nothing was written to it.
func Open(path string, history []Migration) (*gorm.DB, error) {
	return open(path, history)
}

func open(path string, ms []Migration) (*gorm.DB, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("store: database path must not contain '?' or '#': %q", path)
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		if err := create(path, ms); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := checkMagic(path); err != nil {
		return nil, err
	}
	db, err := connect(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDamaged, filepath.Base(path), err)
	}
	if err := quickCheck(db); err != nil {
		closeDB(db)
		return nil, fmt.Errorf("%w: %s: %v", ErrDamaged, filepath.Base(path), err)
	}
	if err := migrate(db, path, ms); err != nil {
		closeDB(db)
		return nil, err
	}
	if err := restrictModes(path); err != nil {
		closeDB(db)
		return nil, err
	}
	return db, nil
}

// create builds the schema in path+".creating" and renames it into place.
// The rename is the commit point: before it there is no database at path,
// after it there is a complete one.
func create(path string, ms []Migration) error {
	tmp := path + ".creating"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: removing leftover %s: %w", filepath.Base(p), err)
		}
	}
	// Created here with 0600 so SQLite, which copies the database file's mode
	// to -wal and -shm, never makes a world-readable companion.
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	f.Close()
	db, err := connect(tmp)
	if err != nil {
		return fmt.Errorf("store: creating database: %w", err)
	}
	err = migrate(db, tmp, ms)
	if err == nil {
		// TRUNCATE checkpoints everything into the main file so the rename
		// moves the whole database; no -wal is left behind under tmp.
		err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error
	}
	if cerr := closeDB(db); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: creating database: %w", err)
	}
	if err := SyncFile(tmp); err != nil {
		return err
	}
	for _, p := range []string{tmp + "-wal", tmp + "-shm"} {
		os.Remove(p)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return SyncDir(filepath.Dir(path))
}

func connect(path string) (*gorm.DB, error) {
	db, err := gorm.Open(sqlite.Open(path+"?"+Pragmas), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
	})
	if err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	// One connection: every statement of this process is serialised, so a
	// transaction never waits on another connection of ours.
	sqlDB.SetMaxOpenConns(1)
	if err := sqlDB.Ping(); err != nil {
		sqlDB.Close()
		return nil, err
	}
	return db, nil
}

func closeDB(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Close closes db.
func Close(db *gorm.DB) error { return closeDB(db) }

func checkMagic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	head := make([]byte, 100)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("store: %w", err)
	}
	if n < len(head) {
		return fmt.Errorf("%w: %s is %d bytes, shorter than a SQLite header", ErrDamaged, filepath.Base(path), n)
	}
	if !bytes.Equal(head[:len(sqliteMagic)], []byte(sqliteMagic)) {
		return fmt.Errorf("%w: %s is not a SQLite database", ErrDamaged, filepath.Base(path))
	}
	return nil
}

func quickCheck(db *gorm.DB) error {
	rows, err := db.Raw("PRAGMA quick_check").Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], "...")
		}
		return errors.New("quick_check: " + strings.Join(problems, "; "))
	}
	return nil
}

// restrictModes makes the database and whichever companions exist 0600; a
// file copied in from elsewhere may carry a wider mode.
func restrictModes(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: %w", err)
		}
	}
	return nil
}

// SyncFile flushes the file at path to its disk.
func SyncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("store: fsync %s: %w", filepath.Base(path), err)
	}
	return nil
}

// SyncDir makes a rename or a new file in dir durable; without it a crash
// can forget the directory entry even though the file's data was synced.
// Windows has no directory fsync (a directory handle cannot be flushed);
// NTFS journals the rename itself.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("store: fsync %s: %w", dir, err)
	}
	return nil
}

// ReadLegacyTable opens an older file at path query-only (never creating
// it) and, when the file and its table exist, runs read on it. A missing
// file or table is not an error: read is not called. Used to carry a
// setting or rows over from a file another part of Yett used to own.
func ReadLegacyTable(path, table string, read func(db *gorm.DB) error) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	db, err := gorm.Open(sqlite.Open(path+"?_pragma=query_only(1)&_pragma=busy_timeout(5000)"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return err
	}
	defer Close(db)
	var n int
	if err := db.Raw(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n).Error; err != nil || n == 0 {
		return err
	}
	return read(db)
}

// UnixSeconds is how a time is kept in an integer column: seconds since
// the epoch, with the zero time as 0 (a column that was never set).
func UnixSeconds(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// FromUnixSeconds reads what UnixSeconds wrote, in UTC; 0 is the zero time.
func FromUnixSeconds(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}
