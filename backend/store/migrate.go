package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gorm.io/gorm"
)

// Migration is one numbered schema step. Up runs inside a transaction that
// also records Version in schema_version, so a crash leaves the database at
// the previous version or at this one, never in between. A database's
// history is append only: a released migration is never edited, because
// databases in the field already ran it.
type Migration struct {
	Version int
	Name    string
	Up      func(tx *gorm.DB) error
}

// Statements is a migration step that runs stmts in order (inside the
// migration's transaction).
func Statements(stmts ...string) func(tx *gorm.DB) error {
	return func(tx *gorm.DB) error {
		for _, stmt := range stmts {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		return nil
	}
}

// SchemaVersion returns the highest migration applied to db (0 for none).
func SchemaVersion(db *gorm.DB) (int, error) {
	var exists int
	if err := db.Raw(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).Scan(&exists).Error; err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	if exists == 0 {
		return 0, nil
	}
	var v int
	if err := db.Raw(`SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	return v, nil
}

func migrate(db *gorm.DB, path string, ms []Migration) error {
	from, err := SchemaVersion(db)
	if err != nil {
		return err
	}
	var pending []Migration
	for _, m := range ms {
		if m.Version > from {
			pending = append(pending, m)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	if from > 0 || hasTables(db) {
		if _, err := backup(db, path, from); err != nil {
			return err
		}
	}
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_version (
		version INTEGER PRIMARY KEY,
		name TEXT NOT NULL,
		applied_unix INTEGER NOT NULL
	)`).Error; err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for _, m := range pending {
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := m.Up(tx); err != nil {
				return err
			}
			return tx.Exec(`INSERT INTO schema_version (version, name, applied_unix) VALUES (?, ?, ?)`,
				m.Version, m.Name, time.Now().Unix()).Error
		})
		if err != nil {
			return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
		}
	}
	return nil
}

func hasTables(db *gorm.DB) bool {
	var n int
	db.Raw(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n)
	return n > 0
}

// backup writes a consistent copy of db next to path, named
// <file>.bak-v<from>-<unix>, and fsyncs it and its directory. VACUUM INTO
// reads through SQLite, so the copy includes what is still in the WAL.
func backup(db *gorm.DB, path string, from int) (string, error) {
	name := fmt.Sprintf("%s.bak-v%d-%d", path, from, time.Now().Unix())
	for i := 1; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s.bak-v%d-%d.%d", path, from, time.Now().Unix(), i)
	}
	// VACUUM INTO accepts an empty existing file; creating it first gives it
	// mode 0600 from the start.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("store: backup before migration: %w", err)
	}
	f.Close()
	if err := db.Exec(`VACUUM INTO ?`, name).Error; err != nil {
		os.Remove(name)
		return "", fmt.Errorf("store: backup before migration: %w", err)
	}
	if err := SyncFile(name); err != nil {
		return "", err
	}
	if err := SyncDir(filepath.Dir(name)); err != nil {
		return "", err
	}
	return name, nil
}
