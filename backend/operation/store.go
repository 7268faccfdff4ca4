package operation

import (
	"fmt"
	"path/filepath"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/store"
)

// FileName is the catalogue's database inside the data directory. It holds
// the operations in the clear: they name things, they are not secrets.
const FileName = "operations.db"

// legacyFile is where operations were kept before the catalogue had a file
// of its own (OAuth custody's database, table oauth_operations).
const legacyFile = "oauth.db"

// history is the catalogue's schema. Its first step also copies the
// operations an earlier version kept in dir's oauth.db: it runs once, in the
// transaction that creates operations.db (store builds a new file under a
// temporary name and renames it into place only after), so the catalogue
// exists with every earlier operation or not at all. The old table is left
// as it was; nothing reads it afterwards.
func history(dir string) []store.Migration {
	return []store.Migration{{Version: 1, Name: "operations, with those kept in oauth.db", Up: func(tx *gorm.DB) error {
		if err := tx.Exec(`CREATE TABLE operations (
			name TEXT PRIMARY KEY,
			authorization_id TEXT NOT NULL,
			spec TEXT NOT NULL,
			updated_at INTEGER NOT NULL
		)`).Error; err != nil {
			return err
		}
		rows, err := legacyRows(filepath.Join(dir, legacyFile))
		if err != nil {
			return fmt.Errorf("reading the operations kept in %s: %w", legacyFile, err)
		}
		for _, r := range rows {
			if err := tx.Exec(`INSERT INTO operations (name, authorization_id, spec, updated_at) VALUES (?, ?, ?, ?)`,
				r.Name, r.AuthorizationID, r.Spec, r.UpdatedAt).Error; err != nil {
				return err
			}
		}
		return nil
	}}}
}

// storedRow is one operation as stored: its spec is the Operation as JSON.
type storedRow struct {
	Name            string
	AuthorizationID string
	Spec            string
	UpdatedAt       int64
}

// legacyRows reads oauth_operations from path, if there is such a file
// and table. The connection is query-only and never creates the file.
func legacyRows(path string) ([]storedRow, error) {
	var rows []storedRow
	err := store.ReadLegacyTable(path, "oauth_operations", func(db *gorm.DB) error {
		return db.Raw(`SELECT name, authorization_id, spec, updated_at FROM oauth_operations ORDER BY name`).Scan(&rows).Error
	})
	return rows, err
}
