package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

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
	// ErrClosed: the journal was closed.
	ErrClosed = errors.New("journal: closed")
)

// Journal is an open journal. Its methods are safe for concurrent use.
//
// A call's records go to the log (log.go) and are durable when the method
// that wrote them returns; concurrent calls share each fsync. The calls in
// the log are kept in memory (live) until they reach a final state (result
// or not dispatched), then folded into the database in batches (fold.go),
// after which the log is rewritten with what is still live. So the hot path
// costs one framed append and a share of one fsync per step, and the
// database, which answers lookups of older calls, is written a batch at a
// time off that path.
type Journal struct {
	db    *gorm.DB // the archive of calls, boots and runs (runs.go)
	sqlDB *sql.DB
	stmts *statements
	wal   *walFile
	log   *slog.Logger

	mu    sync.Mutex
	live  map[callKey]*Entry // by scope and key: the log's calls
	byID  map[string]*Entry  // the same entries, by request id
	seqOf map[string]uint64  // by request id: the log frame of its latest state
	keys  *bloom             // every (scope, key) in the database; nil until built
	seen  []callKey          // keys folded while the bloom was being built
	dirty bool               // a final entry waits to be folded
	// finals counts the calls that became final since the last fold; at
	// foldAt the folder is woken (foldNow) before its next tick, so the
	// calls held in memory stay a few hundred whatever the rate.
	finals  int
	foldNow chan struct{}
	stop    chan struct{}
	done    chan struct{}

	// foldEvery is how often final calls are folded into the database.
	foldEvery time.Duration
}

type callKey struct{ scope, key string }

// Options tune Open; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// FoldEvery is how often final calls move from the log to the
	// database; 0 means one second.
	FoldEvery time.Duration
	// ResultDelay bounds how long a FinishSoon record may wait for a group
	// commit that another call leads before the journal leads one itself;
	// 0 means DefaultResultDelay. The record is durable within twice this.
	ResultDelay time.Duration
}

// DefaultResultDelay is Options.ResultDelay's default: results written with
// FinishSoon are durable within 10 ms.
const DefaultResultDelay = 5 * time.Millisecond

// Open opens (or creates) the journal at path (the database) and its log
// beside it, replays the log, and folds what it holds that is final.
func Open(path string) (*Journal, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options.
func OpenWith(path string, o Options) (*Journal, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.FoldEvery <= 0 {
		o.FoldEvery = time.Second
	}
	if o.ResultDelay <= 0 {
		o.ResultDelay = DefaultResultDelay
	}
	db, err := store.Open(path, history)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{db: db, log: o.Logger, live: map[callKey]*Entry{}, byID: map[string]*Entry{}, seqOf: map[string]uint64{},
		foldNow: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), foldEvery: o.FoldEvery}
	ok := false
	defer func() {
		if !ok {
			j.closeFiles()
		}
	}()
	if j.sqlDB, err = db.DB(); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if j.stmts, err = prepare(j.sqlDB); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if j.wal, err = openWAL(filepath.Dir(path), o.ResultDelay); err != nil {
		return nil, err
	}
	// Later records win: a call's newer state, or a new call that reused
	// the key of one that never left.
	cut, err := j.wal.replay(func(e *Entry) {
		k := callKey{e.Scope, e.Key}
		if old := j.live[k]; old != nil {
			delete(j.byID, old.ID)
		}
		j.live[k], j.byID[e.ID] = e, e
	})
	if err != nil {
		return nil, err
	}
	if cut > 0 {
		j.log.Warn("journal: cut an unacknowledged, torn record off the log's end", "bytes", cut)
	}
	// What the log holds from before this open is folded now, so a crash
	// loop cannot grow it.
	j.dirty = true
	if err := j.fold(true); err != nil {
		return nil, err
	}
	go j.buildBloom()
	go j.folder()
	ok = true
	return j, nil
}

// Close folds what is final, stops, and closes the files. Calls in flight
// stay in the log, and a later Open reads them back.
func (j *Journal) Close() error {
	select {
	case <-j.stop:
		return nil
	default:
	}
	close(j.stop)
	<-j.done
	ferr := j.fold(false)
	return errors.Join(ferr, j.closeFiles())
}

func (j *Journal) closeFiles() error {
	var errs []error
	if j.wal != nil {
		errs = append(errs, j.wal.close())
	}
	if j.stmts != nil {
		j.stmts.close()
	}
	errs = append(errs, store.Close(j.db))
	return errors.Join(errs...)
}

// Syncs is how many fsyncs of the log the journal made, for measuring how
// many calls share one.
func (j *Journal) Syncs() int64 {
	j.wal.mu.Lock()
	defer j.wal.mu.Unlock()
	return j.wal.syncs
}

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
