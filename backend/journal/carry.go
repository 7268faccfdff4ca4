package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The journal's log also carries copies of the audit log's records, so that
// one fsync makes a call's journal record and its audit entry durable
// together (one log, one fsync per durable step). The audit log writes each
// record to its own file at once, hands the journal a copy, and waits for
// the journal's group commit instead of fsyncing its file; it fsyncs its
// file at its checkpoints, when it stops being carried, and before the
// journal rewrites its log without the copies (CarrySync). After a power
// loss the audit log's opener puts back, from ReadCarried, what its file
// lost (audit.Options.Carried).
//
// A carried record's payload is
//
//	'A' | audit log ID (16) | offset in the audit file (8, big endian) | the record's bytes
//
// where an entry's payload is JSON (it starts with '{'). The record is the
// audit log's own sealed bytes: the copy tells a reader of this file no
// more than the audit file does.
const carriedKind = 'A'

const carriedPrefix = 1 + 16 + 8

// Carried is a copy of one audit record the log holds.
type Carried struct {
	Log    [16]byte // the audit log's ID
	Offset int64    // where the record starts in the audit log's file
	Record []byte   // the record, framed as the audit file holds it
}

func carriedFrame(log [16]byte, off int64, rec []byte) []byte {
	n := carriedPrefix + len(rec)
	out := make([]byte, frameHeader+n)
	binary.BigEndian.PutUint32(out, uint32(n))
	p := out[frameHeader:]
	p[0] = carriedKind
	copy(p[1:17], log[:])
	binary.BigEndian.PutUint64(p[17:25], uint64(off))
	copy(p[carriedPrefix:], rec)
	binary.BigEndian.PutUint32(out[4:], crc32Checksum(p))
	return out
}

func parseCarried(p []byte) (Carried, bool) {
	if len(p) <= carriedPrefix || p[0] != carriedKind {
		return Carried{}, false
	}
	var c Carried
	copy(c.Log[:], p[1:17])
	off := binary.BigEndian.Uint64(p[17:25])
	if off > 1<<62 {
		return Carried{}, false
	}
	c.Offset = int64(off)
	c.Record = p[carriedPrefix:]
	return c, true
}

// Carry queues a copy of an audit record that its log has written to its
// own file at off, and returns the sequence number WaitCarried waits for.
// Call it only after the record is written to the audit file: a rewrite
// drops the copy once CarrySync has made that file durable.
func (j *Journal) Carry(log [16]byte, off int64, rec []byte) (uint64, error) {
	if len(rec) == 0 || carriedPrefix+len(rec) > maxRecordBytes {
		return 0, fmt.Errorf("journal: carry: a record of %d bytes", len(rec))
	}
	return j.wal.append(carriedFrame(log, off, rec))
}

// WaitCarried returns once the frame seq (of Carry, or of anything
// appended before it) is durable. It leads a group commit when none runs.
func (j *Journal) WaitCarried(seq uint64) error {
	if err := j.wal.wait(seq); err != nil {
		return fmt.Errorf("journal: carry: %w", err)
	}
	return nil
}

// CarrySoon makes the frames carried so far durable within 2×ResultDelay
// without a wait, as FinishSoon does.
func (j *Journal) CarrySoon() { j.wal.soon() }

// CarrySync sets what the journal calls before a rewrite drops carried
// copies: the audit log's fsync of its own file. nil says nobody carries
// now (the audit log has made its file durable and writes it itself).
// Setting it also forgets the copies an earlier process left in the log:
// the audit log that attaches was opened, and restored from them, first.
func (j *Journal) CarrySync(sync func() error) {
	j.wal.mu.Lock()
	defer j.wal.mu.Unlock()
	j.wal.beforeDrop = sync
	if sync != nil {
		j.wal.leftover = nil
	}
}

// ReadCarried returns the audit record copies held by the journal's log in
// dir (the data directory), in the order they were written. It only reads,
// and stops at a torn tail, as replay does. A missing log holds none.
func ReadCarried(dir string) ([]Carried, error) {
	f, err := os.Open(filepath.Join(dir, LogName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: read carried records: %w", err)
	}
	defer f.Close()
	var out []Carried
	_, err = readFrames(f, func(*Entry) {}, func(c Carried, _ []byte) {
		c.Record = append([]byte(nil), c.Record...)
		out = append(out, c)
	})
	if err != nil && !errors.Is(err, errTorn) {
		return nil, fmt.Errorf("journal: read carried records: %w", err)
	}
	return out, nil
}
