package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"filippo.io/age"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/yettdev/yett/backend/feed"
)

// DefaultCheckpointEvery is how many records may follow a checkpoint before
// the writer signs a new one, and DefaultCheckpointAfter how long records may
// wait unsigned. Signing stops every appender for a few fsyncs (the
// checkpoint file, its record, the tree state), so it is kept off most
// calls: a call pays for it once in thousands, not once in a hundred.
const (
	DefaultCheckpointEvery = 4096
	DefaultCheckpointAfter = time.Minute
	// DefaultResultDelay: records written with AppendSoon are durable within
	// 10 ms.
	DefaultResultDelay = 5 * time.Millisecond
)

// Options configure Open.
type Options struct {
	// Dir holds the log, its checkpoint and its keys; created 0700.
	Dir string
	// Recipient is the public half of the audit key (held by the vault).
	// The writer only ever encrypts segment keys to it: once a segment
	// ends it cannot read that segment back.
	Recipient age.Recipient
	// CheckpointEvery: sign a checkpoint at least every this many records
	// (default DefaultCheckpointEvery). Every checkpoint also ends the
	// current segment, so this bounds what the writer can read back too.
	CheckpointEvery int64
	// CheckpointAfter: sign a checkpoint when records have waited this long
	// unsigned (default DefaultCheckpointAfter; negative: never by time).
	CheckpointAfter time.Duration
	// SyncEach turns group commit off: every Append does its own fsync while
	// holding the log. Slower under concurrency; kept for measurement.
	SyncEach bool
	// ResultDelay bounds how long a record written with AppendSoon waits
	// for a group commit that another Append leads before the log leads
	// one itself (default DefaultResultDelay); it is durable within twice
	// this.
	ResultDelay time.Duration
	// Now is the clock for events the log writes itself (default time.Now).
	Now func() time.Time
	// VerifyBeforeOpen makes Open read and verify the whole log before it
	// returns, as it must anyway when the tree state cannot be used. By
	// default Open verifies only the records after the tree state (see
	// Open) and the rest in the background (Log.Verification).
	VerifyBeforeOpen bool
	// Carried reads the copies a Carrier holds (journal.ReadCarried). A log
	// that was ever carried (CarriedFile) is opened only with it: Open
	// first puts back what the file lost.
	Carried func() ([]Carried, error)

	// wrap lets tests inject a failing file; crashPoint lets the crash test
	// kill the process between the steps of a checkpoint, a segment start
	// or a repair.
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
	// ErrTampered: Open found the log inconsistent (OpenReport says why),
	// or the verification Open left running in the background did
	// (Log.Verification says why); the log then refuses every append.
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
	bg   *backgroundCheck // nil when Open verified everything itself
	// signer signs a checkpoint when records have waited CheckpointAfter.
	signerStop chan struct{}
	signerDone chan struct{}

	mu   sync.Mutex
	cond sync.Cond
	tree compactTree
	end  int64 // byte offset after the last record written
	// written: records handed to write(2); reserved: indexes handed out to
	// appenders (>= written).
	written, reserved int64
	// exclusive: the writer is writing a record of its own (a checkpoint or
	// a segment key) and hands out no tickets until it is done.
	exclusive bool
	durable   int64 // records covered by a successful fsync
	syncing   bool
	broken    error
	closed    bool
	cpEnd     int64 // records up to and including the newest checkpoint record
	lastCPRec int64 // index of the newest checkpoint record, -1 if none
	seg       *writerSegment
	lastSeg   int64 // index of the newest segment-key record, -1 if none
	syncs     int64 // fsyncs of the log file, for the group commit benchmark
	// flushArmed: a flush of the records up to flushTarget (AppendSoon's)
	// is due resultDelay after it was armed.
	flushArmed  bool
	flushTarget int64

	// carrier, when set, makes records durable (CarryBy); carrySeq is the
	// carrier's sequence number of the newest record written.
	carrier      Carrier
	carrySeq     uint64
	carrySyncErr atomic.Pointer[error] // a failed fsync the carrier asked for
	carrierSyncs atomic.Int64          // fsyncs the carrier asked for

	// changes announces records made durable (Subscribe); queued under mu
	// at each successful fsync, delivered after mu is released.
	changes feed.Feed[struct{}]
	// checkpoints announces each checkpoint signed (SubscribeCheckpoints),
	// queued and delivered as changes are.
	checkpoints feed.Feed[Checkpoint]

	verification Verification
}

// Subscribe calls fn each time more records are on stable storage (one
// call may cover many, as one fsync does), as backend/feed delivers: in
// order, never under the log's lock, never concurrently with itself. fn
// must return promptly: the appender that delivers waits for it.
func (l *Log) Subscribe(fn func()) (cancel func()) {
	return l.changes.Subscribe(func(struct{}) { fn() })
}

// SubscribeCheckpoints calls fn with each checkpoint the log signs from now
// on (by count, by time, at Checkpoint and at Close), once the checkpoint
// file holds it, delivered as Subscribe's are. A witness client hangs on
// this to have every checkpoint cosigned; fn must hand slow work off.
func (l *Log) SubscribeCheckpoints(fn func(Checkpoint)) (cancel func()) {
	return l.checkpoints.Subscribe(fn)
}

// deliver delivers what the feeds queued under l.mu; called after it is
// released.
func (l *Log) deliver() {
	l.changes.Deliver()
	l.checkpoints.Deliver()
}

// Append seals e and appends it. It returns the entry's index only once the
// entry is on stable storage. Concurrent Appends share fsyncs (group commit)
// unless Options.SyncEach is set. After any write or sync error, and after
// a failed background verification, every later Append returns an error
// (ErrBroken, ErrTampered).
//
// The entry is sealed under the current segment's key (symmetric, no
// public-key operation); the first Append of a segment first writes the
// segment's key, sealed to the recipient, and makes it durable.
func (l *Log) Append(ctx context.Context, e Event) (int64, error) {
	return l.append(ctx, e, true)
}

// AppendSoon seals e and writes it like Append, but returns before the
// record is on stable storage: the next group commit covers it (another
// Append usually leads one at once), and at the latest a flush the log
// leads itself within 2×Options.ResultDelay; Close covers it too. Readers
// of the file see it at once; Subscribe's callbacks once it is durable. A
// crash before then loses the record, and only records written after it,
// never one before: the log stays a verifiable prefix. An fsync that fails
// later breaks the log, and every later Append is refused.
//
// It is for the records nothing waits on: an action's result, once its
// intent is durable.
func (l *Log) AppendSoon(ctx context.Context, e Event) (int64, error) {
	return l.append(ctx, e, false)
}

func (l *Log) append(ctx context.Context, e Event, wait bool) (int64, error) {
	if err := e.validate(); err != nil {
		return -1, err
	}
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	// Take a ticket (the entry's index) in the current segment, seal outside
	// the lock so that concurrent appenders encrypt in parallel, then write
	// in ticket order. The index and segment are bound into the ciphertext,
	// so both are fixed before sealing.
	l.mu.Lock()
	for {
		for l.exclusive && l.usable() == nil {
			l.cond.Wait()
		}
		if err := l.usable(); err != nil {
			l.mu.Unlock()
			return -1, err
		}
		if l.seg != nil {
			break
		}
		if err := l.startSegmentLocked(); err != nil {
			l.mu.Unlock()
			return -1, err
		}
	}
	seg := l.seg
	seg.users++
	idx := l.reserved
	l.reserved++
	l.mu.Unlock()
	rec, leaf, sealErr := sealedEntry(seg.key, l.key.id, idx, &e)
	defer l.deliver() // after the unlock below
	l.mu.Lock()
	defer l.mu.Unlock()
	if seg.users--; seg.ended && seg.users == 0 {
		seg.key.wipe()
	}
	for l.written != idx && l.usable() == nil {
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		return -1, err
	}
	if sealErr != nil {
		// Our ticket can never be written; later tickets must not wait on it
		// or write past the gap.
		return -1, l.breakLocked(sealErr)
	}
	if err := l.writeFramed(rec, leaf); err != nil {
		return -1, err
	}
	if !wait {
		l.armFlushLocked()
		return idx, nil
	}
	if err := l.waitDurable(idx); err != nil {
		return -1, err
	}
	for l.exclusive && l.broken == nil {
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
	if p := l.carrySyncErr.Load(); p != nil {
		return l.breakLocked(*p)
	}
	return nil
}

// breakLocked makes the log refuse every later append and checkpoint, and
// ends the segment: a log that cannot write has no use for its key.
func (l *Log) breakLocked(err error) error {
	if l.broken == nil {
		l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
	}
	l.endSegmentLocked()
	l.cond.Broadcast()
	return l.broken
}

// writeRecord frames and writes one record of the writer's own at index
// l.written. The caller holds l.mu.
func (l *Log) writeRecord(kind byte, payload []byte) error {
	if len(payload) > MaxBodySize-bodyPrefix {
		// Unreachable (checkpoints are small), but refuse rather than write
		// a record no reader accepts.
		return l.breakLocked(ErrEntryTooLarge)
	}
	rec := newRecord(kind, l.key.id, l.written, len(payload))
	copy(rec[frameHeader+bodyPrefix:], payload)
	return l.writeFramed(rec, finishRecord(rec))
}

// writeFramed writes a framed record at index l.written with one write(2)
// and adds its leaf to the tree. The caller holds l.mu.
func (l *Log) writeFramed(rec []byte, leaf tlog.Hash) error {
	if _, err := l.w.Write(rec); err != nil {
		// A short write may have left part of a record: refuse to write after
		// it. Reopening finds it as a torn tail and saves it aside.
		return l.breakLocked(fmt.Errorf("write: %w", err))
	}
	if l.carrier != nil {
		// After the write: the carrier drops a copy only once the file's
		// fsync covers it, which must then cover the record.
		seq, err := l.carrier.Carry(l.key.id, l.end, rec)
		if err != nil {
			return l.breakLocked(fmt.Errorf("carry: %w", err))
		}
		l.carrySeq = seq
	}
	l.tree.push(leaf)
	l.written++
	l.end += int64(len(rec))
	if l.reserved < l.written {
		l.reserved = l.written // a record of the writer's own takes an index too
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
		if l.carrier != nil {
			// The carrier's group commit, shared with the journal's own
			// records, stands for the file's fsync.
			c, target, seq := l.carrier, l.written, l.carrySeq
			l.mu.Unlock()
			err := c.WaitCarried(seq)
			l.mu.Lock()
			if err != nil {
				l.breakLocked(fmt.Errorf("carried: %w", err))
			} else if target > l.durable {
				l.durable = target
				l.changes.Queue(struct{}{})
			}
			l.cond.Broadcast()
			continue
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
			l.breakLocked(fmt.Errorf("fsync: %w", err))
		} else if target > l.durable {
			l.durable = target
			l.changes.Queue(struct{}{})
		}
		l.cond.Broadcast()
	}
	return nil
}

// armFlushLocked makes sure the records written so far become durable
// soon: a flush is armed for resultDelay; when it is due it leads a commit
// if none has covered them meanwhile, else re-arms only for records
// written since. A steady stream of Appends thus adds no fsync of its own.
func (l *Log) armFlushLocked() {
	if l.flushArmed || l.durable >= l.written || l.usable() != nil {
		return
	}
	l.flushArmed, l.flushTarget = true, l.written
	delay := l.opts.ResultDelay
	if delay <= 0 {
		delay = DefaultResultDelay
	}
	time.AfterFunc(delay, l.flushDue)
}

func (l *Log) flushDue() {
	defer l.deliver() // after the unlock below
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushArmed = false
	if l.usable() != nil {
		return
	}
	if l.durable >= l.flushTarget {
		l.armFlushLocked()
		return
	}
	// A failure breaks the log (waitDurable); the next Append is refused.
	_ = l.waitDurable(l.flushTarget - 1)
}

// Checkpoint signs the current tree head, stores it in the checkpoint file
// and appends it to the log as a record, and ends the current segment (its
// key is wiped; the next Append starts a new one). The gateway calls it at
// vault lock and at stop; the log also calls it every CheckpointEvery
// records.
//
// The file is written before the record so that a checkpoint record at
// index n always means a checkpoint file of size >= n was durable first; a
// file older than the newest record is then evidence of rollback, not of a
// crash between the two writes.
func (l *Log) Checkpoint() (Checkpoint, error) {
	defer l.deliver() // after the unlock below
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return Checkpoint{}, err
	}
	return l.checkpointLocked()
}

func (l *Log) checkpointLocked() (Checkpoint, error) {
	// One record of the writer's own at a time. waitDurable below releases
	// l.mu during fsync; a second checkpoint entering then would clear
	// exclusive when the first one finished, let a new ticket be taken while
	// it still runs, and write its record at that ticket's index, leaving the
	// ticket's appender waiting forever.
	for l.exclusive && l.usable() == nil {
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		return Checkpoint{}, err
	}
	// Stop new tickets and let the issued ones land, so the checkpoint
	// record gets the next index and signs everything before it.
	l.exclusive = true
	defer func() { l.exclusive = false; l.cond.Broadcast() }()
	for (l.syncing || l.written != l.reserved) && l.broken == nil {
		l.cond.Wait()
	}
	if l.broken != nil {
		return Checkpoint{}, l.broken
	}
	// Every ticket has landed, so nobody seals under the segment's key now.
	l.endSegmentLocked()
	if l.carrier != nil {
		// The checkpoint file must never name records the log file may not
		// hold after a power loss, carried or not.
		if err := l.syncOwnLocked(); err != nil {
			return Checkpoint{}, err
		}
	} else if l.durable < l.written {
		if err := l.waitDurable(l.written - 1); err != nil {
			return Checkpoint{}, err
		}
	}
	head := Head{Size: l.written, Root: l.tree.root()}
	cp, err := signCheckpoint(l.key.signer, l.key.vkey, l.key.id, head)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := writeFileAtomic(l.dir, CheckpointFile, cp.Text, 0o600); err != nil {
		return Checkpoint{}, l.breakLocked(err)
	}
	l.opts.crash("checkpoint-file")
	idx := l.written
	if err := l.writeRecord(KindCheckpoint, cp.Text); err != nil {
		return Checkpoint{}, err
	}
	if l.carrier != nil {
		if err := l.syncOwnLocked(); err != nil {
			return Checkpoint{}, err
		}
	} else if err := l.waitDurable(idx); err != nil {
		return Checkpoint{}, err
	}
	l.lastCPRec = idx
	l.opts.crash("checkpoint-record")
	// Sign once more over the checkpoint record itself, so that removing it
	// from the end is caught too. A crash before this leaves the file at the
	// previous size, which verifies.
	head = Head{Size: l.written, Root: l.tree.root()}
	if cp, err = signCheckpoint(l.key.signer, l.key.vkey, l.key.id, head); err != nil {
		return Checkpoint{}, err
	}
	if err := writeFileAtomic(l.dir, CheckpointFile, cp.Text, 0o600); err != nil {
		return Checkpoint{}, l.breakLocked(err)
	}
	l.cpEnd = l.written
	// The tree state of the size just signed, for the next Open. Only ever
	// written after the checkpoint file it matches, so a crash leaves a
	// state no newer than the file (see writeTreeState for why it is not
	// fsynced). A failure to write it costs the next Open a full
	// verification, nothing else.
	st := treeState{logID: l.key.id, tree: l.tree.clone(), offset: l.end, lastCPRec: l.lastCPRec, segment: l.lastSeg}
	writeTreeState(l.dir, &st)
	l.checkpoints.Queue(cp)
	return cp, nil
}

// Syncs is how many fsyncs of the log file the writer made, for measuring
// how many records share one.
func (l *Log) Syncs() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncs + l.carrierSyncs.Load()
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

// Close writes a final checkpoint when the log is healthy, wipes the
// segment key and closes the log. A background verification still running
// is stopped (the next Open starts one again).
func (l *Log) Close() error {
	l.stopBackground()
	l.stopSigner()
	defer l.checkpoints.Deliver() // the final checkpoint, after the unlock below
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	var err error
	if l.broken == nil && l.written > l.cpEnd {
		_, err = l.checkpointLocked()
	}
	if l.carrier != nil && l.broken == nil {
		// Covered by the checkpoint's fsync (or the one before it), so the
		// carrier may drop its copies. A broken log keeps them carried:
		// the next Open restores from them.
		if err == nil && l.durable < l.written {
			err = l.syncOwnLocked()
		}
		if err == nil {
			l.detachLocked()
		}
	}
	l.endSegmentLocked()
	l.closed = true
	l.cond.Broadcast()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// startSigner signs a checkpoint whenever records have waited unsigned for
// CheckpointAfter, so that a quiet log is signed (and its segment ended)
// soon even when CheckpointEvery records never come.
func (l *Log) startSigner() {
	every := l.opts.CheckpointAfter
	if every < 0 {
		return
	}
	if every == 0 {
		every = DefaultCheckpointAfter
	}
	l.signerStop, l.signerDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.signerDone)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-l.signerStop:
				return
			case <-t.C:
			}
			l.mu.Lock()
			due := l.usable() == nil && l.written > l.cpEnd
			l.mu.Unlock()
			if due {
				l.Checkpoint()
			}
		}
	}()
}

func (l *Log) stopSigner() {
	if l.signerStop == nil {
		return
	}
	select {
	case <-l.signerStop:
	default:
		close(l.signerStop)
	}
	<-l.signerDone
}
