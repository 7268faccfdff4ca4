package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// OpenReport says what Open found in an existing log.
type OpenReport struct {
	// Verify is the verification Open ran before returning: of the whole
	// log, or (Background set) of the records after the tree state only.
	Verify Report
	// Background: the rest of the log is being verified in the background;
	// Log.Verification tells when it is done and how it went.
	Background bool
	Recovered  *Recovery // set when a torn tail was cut and saved aside
	// Restored is how many records the file had lost and Open put back
	// from the copies its carrier held (Options.Carried).
	Restored int
}

// Open opens (or creates) the log in opts.Dir for appending.
//
// What Open checks before the first append: the signing key and the log ID;
// the checkpoint file's signature by that key; that the tree state (the
// O(log n) hashes a checkpoint left in TreeStateFile) folds to the root the
// checkpoint signs, or to a root that, extended by the records after it,
// reaches it; and every record after the tree state: framing, checksums,
// index sequence, log ID, segment structure and in-log checkpoints. Then it
// returns, and a goroutine verifies the whole log as Verify does
// (Log.Verification); if that fails, the log refuses every later Append as if
// Open had refused it. Nothing Open or the log signs vouches for bytes that
// were not checked: checkpoints sign the tree the signed state and the
// checked records give, so a record edited before the state no longer
// matches it.
//
// Open reads and verifies the whole log before returning, and refuses one
// that fails (ErrTampered, with the report), when the tree state is missing,
// does not parse or does not match, when the log has a torn tail (it is only
// cut after the whole log checked out), and with Options.VerifyBeforeOpen.
// A torn tail is saved to a file beside the log, cut off, and recorded as an
// audit_recovered event; a checkpoint is then written so the log is covered
// from the start.
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
	l := &Log{opts: opts, dir: opts.Dir, f: f, w: f, now: now, lastCPRec: -1, lastSeg: -1}
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
	l.startSigner()
	return l, orep, nil
}

// load takes the lock, finds or creates the keys and checks the log, from
// the tree state when it can.
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
	if orep.Restored, err = l.restoreCarried(); err != nil {
		return err
	}
	if orep.Restored > 0 {
		if fi, err = l.f.Stat(); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	cpText, err := os.ReadFile(filepath.Join(l.dir, CheckpointFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("audit: %w", err)
	}
	if res, ok := l.fastScan(fi.Size(), cpText); ok {
		orep.Verify, orep.Background = res.Report, true
		l.adopt(res)
		l.verifyInBackground(res.size, cpText, res.Head)
		return nil
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
	l.adopt(res)
	l.verification = Verification{Report: res.Report}
	return nil
}

// fastScan checks the log from the tree state on: it succeeds only when the
// state matches a checkpoint signed by this log's key and every record after
// it checks out with no torn tail. Anything else (no state, a state that does
// not match, a problem in the tail) returns false and Open verifies the whole
// log, which alone decides whether it is tampered: an unsigned cache is never
// evidence either way.
func (l *Log) fastScan(size int64, cpText []byte) (scanResult, bool) {
	if l.opts.VerifyBeforeOpen || size == 0 || cpText == nil {
		return scanResult{}, false
	}
	st, err := readTreeState(l.dir)
	if err != nil || st == nil || st.logID != l.key.id || st.offset > size {
		return scanResult{}, false
	}
	cp, err := ParseCheckpoint(cpText)
	if err != nil || cp.VerifierKey != l.key.vkey || cp.LogID != l.key.id || cp.Size < st.tree.n {
		return scanResult{}, false
	}
	// With a state of the checkpoint's size the fold must give its root now;
	// an older state is checked when the scan passes the checkpoint's size
	// (scan compares the file checkpoint's root there).
	if cp.Size == st.tree.n && st.tree.root() != cp.Root {
		return scanResult{}, false
	}
	from := &scanFrom{tree: st.tree, offset: st.offset, lastCPRec: st.lastCPRec, segment: st.segment}
	sc := scanConfig{vkey: l.key.vkey, file: &cp, from: from}
	rep := Report{FirstBad: -1, FirstBadOffset: -1}
	// scan counts offsets from from.offset on, so it gets the whole size.
	res := scan(io.NewSectionReader(l.f, st.offset, size-st.offset), size, sc, rep)
	if res.Status != StatusIntact || res.Torn != nil || res.logID != l.key.id {
		return scanResult{}, false
	}
	return res, true
}

// adopt takes the writer's state from a scan that checked out.
func (l *Log) adopt(res scanResult) {
	l.tree, l.written, l.reserved, l.durable = res.tree, res.Entries, res.Entries, res.Entries
	l.end = res.size
	l.cpEnd = res.lastCPRec + 1
	l.lastCPRec, l.lastSeg = res.lastCPRec, res.segment
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

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
