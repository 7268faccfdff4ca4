package audit

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// A Carrier keeps a durable copy of the log's records in place of the
// log's own fsync: the journal's log (backend/journal), so that one fsync
// makes a call's journal record and its audit entry durable together.
//
// While carried, the log writes each record to its file at once, hands the
// carrier a copy and waits for the carrier's group commit. It fsyncs its
// own file at every checkpoint (so the checkpoint file never names records
// the log file may not hold), when it stops being carried, and whenever the
// carrier is about to drop copies (the sync it gets from CarrySync). After
// a power loss the file may lack records that were acknowledged; Open puts
// them back from Options.Carried before it checks anything.
type Carrier interface {
	// Carry queues a copy of rec, written to the log file at off.
	Carry(log [16]byte, off int64, rec []byte) (uint64, error)
	// WaitCarried returns once the copy seq, and every one before it, is
	// durable.
	WaitCarried(seq uint64) error
	// CarrySync sets what the carrier calls before it drops copies; nil
	// when the log no longer needs them.
	CarrySync(sync func() error)
}

// CarriedFile, in the log directory, says that a carrier has held the
// log's records: from then on Open needs Options.Carried, or it could
// append after a file that lost acknowledged records.
const CarriedFile = "carried"

// ErrCarriedUnread: Open was asked to open a carried log without reading
// what its carrier holds.
var ErrCarriedUnread = errors.New("audit: this log's records are carried by the journal; open it with Options.Carried")

// Carried is one copy a carrier holds (journal.ReadCarried gives them).
type Carried struct {
	Log    LogID
	Offset int64
	Record []byte
}

// CarryBy makes c carry the log's records from now on, or, with nil, stops
// the carrying: either way the log first makes everything written so far
// durable in its own file, so no record ever depends on a carrier that is
// no longer asked.
func (l *Log) CarryBy(c Carrier) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.exclusive && l.usable() == nil {
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		return err
	}
	l.exclusive = true
	defer func() { l.exclusive = false; l.cond.Broadcast() }()
	for (l.syncing || l.written != l.reserved) && l.broken == nil {
		l.cond.Wait()
	}
	if l.broken != nil {
		return l.broken
	}
	if err := l.syncOwnLocked(); err != nil {
		return err
	}
	l.detachLocked()
	if c == nil {
		return nil
	}
	if !exists(filepath.Join(l.dir, CarriedFile)) {
		if err := writeFileAtomic(l.dir, CarriedFile, []byte("journal\n"), 0o600); err != nil {
			return err
		}
	}
	l.carrier, l.carrySeq = c, 0
	c.CarrySync(l.syncForCarrier)
	return nil
}

// detachLocked tells the carrier its copies are no longer needed. Only
// after the log's own fsync covered every record: l.mu held.
func (l *Log) detachLocked() {
	if l.carrier != nil {
		l.carrier.CarrySync(nil)
		l.carrier, l.carrySeq = nil, 0
	}
}

// syncOwnLocked fsyncs the log file itself with l.mu held and no group
// commit running: at checkpoints and when carrying starts or stops.
func (l *Log) syncOwnLocked() error {
	target := l.written
	l.syncs++
	if err := l.w.Sync(); err != nil {
		return l.breakLocked(fmt.Errorf("fsync: %w", err))
	}
	if target > l.durable {
		l.durable = target
		l.changes.Queue(struct{}{})
	}
	return nil
}

// syncForCarrier is what the carrier calls, without l.mu (the carrier may
// hold its own lock, which appenders take under l.mu), before it drops
// copies. A failure sticks: after a failed fsync nothing written since can
// be trusted to reach the disk, so the copies must stay, and the log
// refuses every later append.
func (l *Log) syncForCarrier() error {
	if p := l.carrySyncErr.Load(); p != nil {
		return *p
	}
	if err := l.w.Sync(); err != nil {
		e := fmt.Errorf("fsync: %w", err)
		l.carrySyncErr.Store(&e)
		return e
	}
	l.carrierSyncs.Add(1)
	return nil
}

// restoreCarried puts back into the log file the records its carrier holds
// and the file lost (a power loss after the carrier's fsync and before the
// file's own). It writes only past the file's end, or over a torn last
// record: bytes the file holds are left as found, for verification to
// judge. It runs before anything reads the log.
func (l *Log) restoreCarried() (int, error) {
	if !exists(filepath.Join(l.dir, CarriedFile)) {
		return 0, nil
	}
	if l.opts.Carried == nil {
		return 0, ErrCarriedUnread
	}
	all, err := l.opts.Carried()
	if err != nil {
		return 0, fmt.Errorf("audit: read the records the journal carries: %w", err)
	}
	var recs []Carried
	for _, c := range all {
		if c.Log == l.key.id && len(c.Record) > 0 {
			recs = append(recs, c)
		}
	}
	slices.SortStableFunc(recs, func(a, b Carried) int { return cmp.Compare(a.Offset, b.Offset) })
	fi, err := l.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	size := fi.Size()
	var wf *os.File
	restored := 0
	for _, c := range recs {
		end := c.Offset + int64(len(c.Record))
		if end <= size {
			continue
		}
		if c.Offset > size {
			// Every record not in the file's own fsync was carried, so a
			// hole means the copies are not this file's: appending now
			// would give acknowledged indexes to new records.
			return restored, fmt.Errorf("audit: the log file ends at byte %d but the journal carries a record from byte %d on; the log was left as found", size, c.Offset)
		}
		if wf == nil {
			if wf, err = os.OpenFile(filepath.Join(l.dir, LogFile), os.O_WRONLY, 0); err != nil {
				return restored, fmt.Errorf("audit: restore carried records: %w", err)
			}
			defer wf.Close()
		}
		if err := wf.Truncate(c.Offset); err != nil {
			return restored, fmt.Errorf("audit: restore carried records: %w", err)
		}
		if _, err := wf.WriteAt(c.Record, c.Offset); err != nil {
			return restored, fmt.Errorf("audit: restore carried records: %w", err)
		}
		size = end
		restored++
	}
	if wf != nil {
		if err := wf.Sync(); err != nil {
			return restored, fmt.Errorf("audit: restore carried records: %w", err)
		}
	}
	return restored, nil
}
