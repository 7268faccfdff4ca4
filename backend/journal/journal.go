package journal

import (
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/store"
)

// FileName is the journal database inside the data directory. It is a file of
// its own so that the vault's file never grows with activity.
const FileName = "journal.db"

// Errors callers branch on.
var (
	// ErrNotFound: no call with that key in that scope.
	ErrNotFound = errors.New("journal: no such call")
	// ErrKeyInUse: the key already names a call that left or is in flight.
	ErrKeyInUse = errors.New("journal: idempotency key already used")
	// ErrKeyReused: the key already names a call with another request.
	ErrKeyReused = errors.New("journal: idempotency key names another request")
	// ErrBadState: a transition that the state machine does not allow.
	ErrBadState = errors.New("journal: call is not in the expected state")
)

// Journal is an open journal database. Its methods are safe for concurrent
// use; each write is one committed transaction.
type Journal struct {
	db *gorm.DB
}

// Open opens (or creates) the journal at path.
func Open(path string) (*Journal, error) {
	db, err := store.Open(path, history)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Journal{db: db}, nil
}

// Close closes the database.
func (j *Journal) Close() error { return store.Close(j.db) }

// history is the journal database's migration history (append only).
var history = []store.Migration{
	{Version: 1, Name: "journal tables", Up: store.Statements(schema...)},
}

var schema = []string{
	`CREATE TABLE IF NOT EXISTS journal_calls (
		id TEXT PRIMARY KEY,
		scope TEXT NOT NULL,
		idem_key TEXT NOT NULL,
		state TEXT NOT NULL,
		boot_id TEXT NOT NULL,
		run_id TEXT NOT NULL,
		method TEXT NOT NULL,
		target TEXT NOT NULL,
		path TEXT NOT NULL,
		credential_ref TEXT NOT NULL,
		request_bytes INTEGER NOT NULL,
		request_sha256 TEXT NOT NULL,
		reason TEXT NOT NULL DEFAULT '',
		status INTEGER NOT NULL DEFAULT 0,
		class TEXT NOT NULL DEFAULT '',
		response_bytes INTEGER NOT NULL DEFAULT 0,
		response_sha256 TEXT NOT NULL DEFAULT '',
		truncated INTEGER NOT NULL DEFAULT 0,
		created_unix_nano INTEGER NOT NULL,
		updated_unix_nano INTEGER NOT NULL,
		UNIQUE (scope, idem_key)
	)`,
	`CREATE TABLE IF NOT EXISTS journal_boots (
		boot_id TEXT PRIMARY KEY,
		previous_boot_id TEXT NOT NULL,
		started_unix_nano INTEGER NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS journal_runs (
		boot_id TEXT NOT NULL,
		run_id TEXT NOT NULL,
		pid INTEGER NOT NULL,
		start_key INTEGER NOT NULL,
		exe_sha256 TEXT NOT NULL,
		approved_unix_nano INTEGER NOT NULL,
		PRIMARY KEY (boot_id, run_id)
	)`,
	`CREATE INDEX IF NOT EXISTS journal_runs_process ON journal_runs (pid, start_key)`,
	`CREATE INDEX IF NOT EXISTS journal_runs_exe ON journal_runs (exe_sha256)`,
}
