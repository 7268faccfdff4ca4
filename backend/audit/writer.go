package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"filippo.io/age"
	"golang.org/x/mod/sumdb/tlog"
)

// DefaultCheckpointEvery is how many records may follow a checkpoint before
// the writer signs a new one.
const DefaultCheckpointEvery = 256

// Options configure Open.
type Options struct {
	// Dir holds the log, its checkpoint and its keys; created 0700.
	Dir string
	// Recipient is the public half of the audit key (held by the vault).
	// The writer only ever encrypts to it: it cannot read the log back.
	Recipient age.Recipient
	// CheckpointEvery: sign a checkpoint at least every this many records
	// (default DefaultCheckpointEvery).
	CheckpointEvery int64
	// SyncEach turns group commit off: every Append does its own fsync while
	// holding the log. Slower under concurrency; kept for measurement.
	SyncEach bool
	// Now is the clock for events the log writes itself (default time.Now).
	Now func() time.Time

	// wrap lets tests inject a failing file; crashPoint lets the crash test
	// kill the process between the steps of a checkpoint or a repair.
	wrap       func(logFile) logFile
	crashPoint func(name string)
}

func (o *Options) crash(name string) {
	if o.crashPoint != nil {
		o.crashPoint(name)
	}
}

// logFile is what the writer needs from the open log file.
type logFile interface {
	io.Writer
	Sync() error
}

// Errors returned by Open and Append.
var (
	// ErrBroken: an earlier write or fsync failed. The log refuses every
	// later append until it is reopened, because writing after a gap could
	// acknowledge entries that follow a record that is not on disk.
	ErrBroken = errors.New("audit: log failed earlier and refuses appends until reopened")
	ErrClosed = errors.New("audit: log closed")
	// ErrTampered: Open found the log inconsistent; OpenReport says why.
	ErrTampered = errors.New("audit: existing log failed verification")
	// ErrEntryTooLarge: the sealed event exceeds MaxBodySize.
	ErrEntryTooLarge = errors.New("audit: entry too large")
)

// Log is an open audit log writer. Its methods are safe for concurrent use.
type Log struct {
	opts Options
	dir  string
	f    *os.File
	w    logFile
	key  *signingKey
	now  func() time.Time

	mu        sync.Mutex
	cond      sync.Cond
	tree      compactTree
	written   int64 // records handed to write(2)
	reserved  int64 // indexes handed out to appenders (>= written)
	cpPending bool  // a checkpoint is waiting for issued tickets to land
	durable   int64 // records covered by a successful fsync
	syncing   bool
	broken    error
	closed    bool
	cpEnd     int64 // records up to and including the newest checkpoint record
	syncs     int64 // fsyncs of the log file, for the group commit benchmark
}

// OpenReport says what Open found in an existing log.
type OpenReport struct {
	Verify    Report    // the verification Open ran
	Recovered *Recovery // set when a torn tail was cut and saved aside
}

// Open opens (or creates) the log in opts.Dir for appending. It verifies the
// whole existing log first and refuses one that fails (ErrTampered, with the
// report). A torn tail is saved to a file beside the log, cut off, and
// recorded as an audit_recovered event; a checkpoint is then written so the
// log is covered from the start.
func Open(opts Options) (*Log, OpenReport, error) {
	var orep OpenReport
	if opts.Recipient == nil {
		return nil, orep, errors.New("audit: Open needs the audit recipient")
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = DefaultCheckpointEvery
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, orep, fmt.Errorf("audit: %w", err)
	}
	path := filepath.Join(opts.Dir, LogFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, orep, fmt.Errorf("audit: open log: %w", err)
	}
	l := &Log{opts: opts, dir: opts.Dir, f: f, w: f, now: now}
	l.cond.L = &l.mu
	if err := l.load(&orep); err != nil {
		f.Close()
		return nil, orep, err
	}
	if opts.wrap != nil {
		l.w = opts.wrap(f)
	}
	if orep.Recovered != nil {
		ev := Event{Type: EventAuditRecovered, Time: now().UTC(), Recovery: orep.Recovered}
		if _, err := l.Append(context.Background(), ev); err != nil {
			l.Close()
			return nil, orep, err
		}
	}
	if l.written > l.cpEnd {
		if _, err := l.Checkpoint(); err != nil {
			l.Close()
			return nil, orep, err
		}
	}
	return l, orep, nil
}

// load takes the lock, finds or creates the keys and replays the log.
func (l *Log) load(orep *OpenReport) error {
	if err := lockFile(l.f); err != nil {
		return err
	}
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	key, err := loadSigningKey(l.dir)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist) && fi.Size() == 0 && !exists(filepath.Join(l.dir, CheckpointFile)):
		if key, err = newSigningKey(l.dir); err != nil {
			return err
		}
	case errors.Is(err, os.ErrNotExist):
		return ErrNoSigningKey
	default:
		return err
	}
	l.key = key
	cpText, err := os.ReadFile(filepath.Join(l.dir, CheckpointFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("audit: %w", err)
	}
	rep := Report{FirstBad: -1, FirstBadOffset: -1}
	res := verifyStream(io.NewSectionReader(l.f, 0, fi.Size()), fi.Size(), cpText, key.vkey, nil, rep)
	orep.Verify = res.Report
	switch res.Status {
	case StatusUnreadable:
		return res.Err
	case StatusTampered:
		return fmt.Errorf("%w: %w", ErrTampered, res.Err)
	}
	if res.haveID && res.logID != key.id {
		return fmt.Errorf("%w: %w", ErrTampered, ErrForeignRecord)
	}
	if res.Torn != nil {
		rec, err := l.saveTorn(res.Torn)
		if err != nil {
			return err
		}
		orep.Recovered = rec
	}
	l.tree, l.written, l.reserved, l.durable = res.tree, res.Entries, res.Entries, res.Entries
	l.cpEnd = res.lastCPRec + 1
	return nil
}

// saveTorn copies the torn bytes to their own file, makes that durable, and
// only then cuts them from the log: evidence is moved, never dropped.
func (l *Log) saveTorn(t *Torn) (*Recovery, error) {
	b := make([]byte, t.Length)
	if _, err := l.f.ReadAt(b, t.Offset); err != nil {
		return nil, fmt.Errorf("audit: read torn tail: %w", err)
	}
	name := fmt.Sprintf("torn-%d-%d", t.Offset, l.now().UnixNano())
	if err := writeFileAtomic(l.dir, name, b, 0o600); err != nil {
		return nil, err
	}
	l.opts.crash("torn-saved")
	if err := l.f.Truncate(t.Offset); err != nil {
		return nil, fmt.Errorf("audit: cut torn tail: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return nil, fmt.Errorf("audit: cut torn tail: %w", err)
	}
	return &Recovery{Offset: t.Offset, Length: t.Length, SHA256: sha256Hex(b), SavedAs: name, LastIndex: t.AfterIndex}, nil
}

// Append seals e to the recipient and appends it. It returns the entry's
// index only once the entry is on stable storage. Concurrent Appends share
// fsyncs (group commit) unless Options.SyncEach is set. After any write or
// sync error every later Append returns ErrBroken.
func (l *Log) Append(ctx context.Context, e Event) (int64, error) {
	if err := e.validate(); err != nil {
		return -1, err
	}
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	// Take a ticket (the entry's index), seal outside the lock so that
	// concurrent appenders encrypt in parallel, then write in ticket order.
	// The index is inside the ciphertext, so it must be fixed before sealing.
	l.mu.Lock()
	for l.cpPending && l.usable() == nil {
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return -1, err
	}
	idx := l.reserved
	l.reserved++
	l.mu.Unlock()
	payload, sealErr := seal(l.opts.Recipient, l.key.id, idx, &e)
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.written != idx && l.usable() == nil {
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		return -1, err
	}
	if sealErr != nil {
		// Our ticket can never be written; later tickets must not wait on it
		// or write past the gap.
		l.broken = fmt.Errorf("%w: %w", ErrBroken, sealErr)
		l.cond.Broadcast()
		return -1, l.broken
	}
	if err := l.writeRecord(KindEvent, payload); err != nil {
		return -1, err
	}
	if err := l.waitDurable(idx); err != nil {
		return -1, err
	}
	for l.cpPending && l.broken == nil {
		l.cond.Wait() // another appender is already signing
	}
	if l.written-l.cpEnd >= l.opts.CheckpointEvery {
		if _, err := l.checkpointLocked(); err != nil {
			return -1, err
		}
	}
	return idx, nil
}

func (l *Log) usable() error {
	switch {
	case l.closed:
		return ErrClosed
	case l.broken != nil:
		return l.broken
	}
	return nil
}

// writeRecord frames and writes one record at index l.written. The caller
// holds l.mu.
func (l *Log) writeRecord(kind byte, payload []byte) error {
	if len(payload) > MaxBodySize-bodyPrefix {
		// Unreachable with validated events (every field is bounded), but the
		// ticket is taken: later appenders must not wait on it forever.
		l.broken = fmt.Errorf("%w: %w", ErrBroken, ErrEntryTooLarge)
		l.cond.Broadcast()
		return l.broken
	}
	body := encodeBody(kind, l.key.id, l.written, payload)
	rec := frame(body)
	if _, err := l.w.Write(rec); err != nil {
		// A short write may have left part of a record: refuse to write after
		// it. Reopening finds it as a torn tail and saves it aside.
		l.broken = fmt.Errorf("%w: write: %w", ErrBroken, err)
		l.cond.Broadcast()
		return l.broken
	}
	l.tree.push(tlog.RecordHash(body))
	l.written++
	if l.reserved < l.written {
		l.reserved = l.written // a checkpoint record takes an index too
	}
	l.cond.Broadcast() // the next ticket may write now
	return nil
}

// waitDurable returns once record idx is covered by a successful fsync. With
// group commit the first waiter syncs for everyone written so far while the
// others wait; records written during that fsync are covered by the next one.
func (l *Log) waitDurable(idx int64) error {
	for l.durable <= idx {
		if l.broken != nil {
			return l.broken
		}
		if l.syncing {
			l.cond.Wait()
			continue
		}
		target := l.written
		l.syncing = true
		l.syncs++
		var err error
		if l.opts.SyncEach {
			err = l.w.Sync()
		} else {
			l.mu.Unlock()
			err = l.w.Sync()
			l.mu.Lock()
		}
		l.syncing = false
		if err != nil {
			// After a failed fsync the kernel may have dropped the dirty
			// pages; nothing written since the last good sync can be trusted.
			l.broken = fmt.Errorf("%w: fsync: %w", ErrBroken, err)
		} else if target > l.durable {
			l.durable = target
		}
		l.cond.Broadcast()
	}
	return nil
}

// Checkpoint signs the current tree head, stores it in the checkpoint file
// and appends it to the log as a record. The gateway calls it at vault lock
// and at stop; the log also calls it every CheckpointEvery records.
//
// The file is written before the record so that a checkpoint record at
// index n always means a checkpoint file of size >= n was durable first; a
// file older than the newest record is then evidence of rollback, not of a
// crash between the two writes.
func (l *Log) Checkpoint() (Checkpoint, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return Checkpoint{}, err
	}
	return l.checkpointLocked()
}

func (l *Log) checkpointLocked() (Checkpoint, error) {
	// One checkpoint at a time. waitDurable below releases l.mu during
	// fsync; a second checkpoint entering then would clear cpPending when
	// the first one finished, let a new ticket be taken while it still runs,
	// and write its record at that ticket's index, leaving the ticket's
	// appender waiting forever.
	for l.cpPending && l.usable() == nil {
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		return Checkpoint{}, err
	}
	// Stop new tickets and let the issued ones land, so the checkpoint
	// record gets the next index and signs everything before it.
	l.cpPending = true
	defer func() { l.cpPending = false; l.cond.Broadcast() }()
	for (l.syncing || l.written != l.reserved) && l.broken == nil {
		l.cond.Wait()
	}
	if l.broken != nil {
		return Checkpoint{}, l.broken
	}
	if l.durable < l.written {
		if err := l.waitDurable(l.written - 1); err != nil {
			return Checkpoint{}, err
		}
	}
	head := Head{Size: l.written, Root: l.tree.root()}
	cp, err := signCheckpoint(l.key.signer, l.key.vkey, l.key.id, head)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := writeFileAtomic(l.dir, CheckpointFile, cp.Text, 0o644); err != nil {
		l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
		return Checkpoint{}, l.broken
	}
	l.opts.crash("checkpoint-file")
	idx := l.written
	if err := l.writeRecord(KindCheckpoint, cp.Text); err != nil {
		return Checkpoint{}, err
	}
	if err := l.waitDurable(idx); err != nil {
		return Checkpoint{}, err
	}
	l.opts.crash("checkpoint-record")
	// Sign once more over the checkpoint record itself, so that removing it
	// from the end is caught too. A crash before this leaves the file at the
	// previous size, which verifies.
	head = Head{Size: l.written, Root: l.tree.root()}
	if cp, err = signCheckpoint(l.key.signer, l.key.vkey, l.key.id, head); err != nil {
		return Checkpoint{}, err
	}
	if err := writeFileAtomic(l.dir, CheckpointFile, cp.Text, 0o644); err != nil {
		l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
		return Checkpoint{}, l.broken
	}
	l.cpEnd = l.written
	return cp, nil
}

// Head returns the tree head over every record written so far (all of them
// durable unless an Append is in flight or the log is broken).
func (l *Log) Head() Head {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Head{Size: l.written, Root: l.tree.root()}
}

// VerifierKey returns the public note key that signs this log's checkpoints.
func (l *Log) VerifierKey() string { return l.key.vkey }

// Close writes a final checkpoint when the log is healthy and closes it.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	var err error
	if l.broken == nil && l.written > l.cpEnd {
		_, err = l.checkpointLocked()
	}
	l.closed = true
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
