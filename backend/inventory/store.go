package inventory

import (
	"path/filepath"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/store"
)

// FileName is the inventory's database inside the data directory. It holds
// names, dates and drill reports in the clear (they say who answers for
// what, they are not secrets), and the last confirmed use of each row, as
// OAuth custody's database always did.
const FileName = "inventory.db"

// history is the inventory's schema. Its first step takes over the
// block-uncontrolled switch OAuth custody kept in oauth.db; the owners it
// kept there are taken over row by row, the first time the inventory sees
// each authorization (record).
func history(dir string) []store.Migration {
	return []store.Migration{{Version: 1, Name: "inventory, drills and uses", Up: func(tx *gorm.DB) error {
		for _, stmt := range []string{
			`CREATE TABLE inventory_rows (
				id TEXT PRIMARY KEY,
				kind TEXT NOT NULL,
				owner TEXT NOT NULL,
				backup_revoker TEXT NOT NULL,
				environment TEXT NOT NULL,
				review_by INTEGER NOT NULL,
				review_notified INTEGER NOT NULL,
				drill_every_days INTEGER NOT NULL,
				drill_kind TEXT NOT NULL,
				drill_notified INTEGER NOT NULL,
				first_seen INTEGER NOT NULL
			)`,
			`CREATE TABLE drill_reports (
				id TEXT PRIMARY KEY,
				row_id TEXT NOT NULL,
				kind TEXT NOT NULL,
				trigger TEXT NOT NULL,
				started_at INTEGER NOT NULL,
				finished_at INTEGER NOT NULL,
				passed INTEGER NOT NULL,
				report TEXT NOT NULL
			)`,
			`CREATE INDEX drill_reports_row ON drill_reports (row_id, finished_at)`,
			`CREATE TABLE uses (
				ref TEXT PRIMARY KEY,
				last_use INTEGER NOT NULL
			)`,
			`CREATE TABLE settings (
				id INTEGER PRIMARY KEY CHECK (id = 1),
				block_uncontrolled INTEGER NOT NULL,
				audit_position TEXT NOT NULL
			)`,
		} {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		block, err := legacyBlock(filepath.Join(dir, "oauth.db"))
		if err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO settings (id, block_uncontrolled, audit_position) VALUES (1, ?, '')`, block).Error
	}}}
}

// legacyBlock reads oauth.db's block_uncontrolled switch, if there is such
// a file. The connection is query-only and never creates the file.
func legacyBlock(path string) (bool, error) {
	var on bool
	err := store.ReadLegacyTable(path, "oauth_settings", func(db *gorm.DB) error {
		return db.Raw(`SELECT block_uncontrolled FROM oauth_settings WHERE id = 1`).Scan(&on).Error
	})
	return on, err
}

// record is a row's part the inventory keeps.
type record struct {
	ID             string
	Kind           string
	Owner          string
	BackupRevoker  string
	Environment    string
	ReviewBy       int64
	ReviewNotified int64
	DrillEveryDays int
	DrillKind      string
	DrillNotified  int64
	FirstSeen      int64
}

func (record) TableName() string { return "inventory_rows" }

// reportRow is one stored drill report.
type reportRow struct {
	ID         string
	RowID      string
	Kind       string
	Trigger    string
	StartedAt  int64
	FinishedAt int64
	Passed     bool
	Report     string
}

func (reportRow) TableName() string { return "drill_reports" }
