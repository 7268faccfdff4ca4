package audit

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"filippo.io/age"
)

// Entry is one decrypted event, its index in the log, and the position
// just after it, to resume reading from (ReadEventsFrom).
type Entry struct {
	Index int64
	Event Event
	Next  Position
}

// Position is a place between two records of a log, as a reader resumes from
// it: the index and byte offset of the next record, and the segment-key
// record of the segment that record may belong to. The zero Position is the
// start of the log. A Position is only ever taken from an Entry; it names
// nothing secret (the log's framing shows the same offsets to anyone).
type Position struct {
	Index         int64 `json:"index"`
	Offset        int64 `json:"offset"`
	Segment       int64 `json:"segment"`        // index of the newest segment-key record before Index, -1 if none (ignored at Index 0)
	SegmentOffset int64 `json:"segment_offset"` // its byte offset
}

// ErrBadPosition is returned by ReadEventsFrom for a position that is not a
// record boundary of this log as the position says.
var ErrBadPosition = errors.New("audit: position does not match the log")

// ReadEvents decrypts the event records of the log at logPath with identity
// (the vault's audit identity), in order, skipping checkpoint and segment-key
// records. A torn tail ends the sequence quietly; any other problem is
// yielded as an error and ends it. ReadEvents does not prove integrity: run
// Verify for that.
//
// Reading costs one X25519 unwrap per segment (at most CheckpointEvery
// entries, usually) and a symmetric decryption per entry.
func ReadEvents(logPath string, identity age.Identity) iter.Seq2[Entry, error] {
	return ReadEventsFrom(logPath, identity, Position{})
}

// ReadEventsFrom is ReadEvents from a position an earlier Entry returned as
// Next, so a reader that keeps its place decrypts each entry once. A
// position that does not match the log yields ErrBadPosition.
func ReadEventsFrom(logPath string, identity age.Identity, from Position) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		f, err := os.Open(logPath)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		defer f.Close()
		r := &eventReader{f: f, identity: identity, pos: from}
		defer r.seg.wipe()
		if err := r.resume(); err != nil {
			yield(Entry{}, err)
			return
		}
		for {
			e, err := r.next()
			if err == io.EOF {
				return
			}
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// eventReader decrypts events one at a time, holding the key of the segment
// it is in.
type eventReader struct {
	f        *os.File
	identity age.Identity
	rr       recordReader
	pos      Position
	seg      *segmentKey
	segs     segmentRules
	resumed  bool // the next record is the first after a resume
}

// resume reads the segment key pos names, if any, and positions the reader
// at pos.Offset.
func (r *eventReader) resume() error {
	p := r.pos
	r.segs.current = -1
	if p.Index == 0 {
		if p.Offset != 0 {
			return ErrBadPosition
		}
		r.pos.Segment, r.pos.SegmentOffset = -1, 0
	} else {
		if p.Offset <= 0 || p.Segment < -1 || p.Segment >= p.Index || p.SegmentOffset < 0 || p.SegmentOffset >= p.Offset {
			return ErrBadPosition
		}
		r.resumed = true
	}
	if p.Index > 0 && p.Segment >= 0 {
		rr := recordReader{r: io.NewSectionReader(r.f, p.SegmentOffset, p.Offset-p.SegmentOffset)}
		rec, _, err := rr.next()
		if err != nil || rec.Kind != KindSegmentKey || rec.Index != p.Segment {
			return fmt.Errorf("%w: no segment key %d at offset %d", ErrBadPosition, p.Segment, p.SegmentOffset)
		}
		if r.seg, err = openSegment(rec, r.identity); err != nil {
			return err
		}
		r.segs.current = rec.Index
	}
	fi, err := r.f.Stat()
	if err != nil {
		return err
	}
	if p.Offset > fi.Size() {
		return fmt.Errorf("%w: offset %d is past the end of the log", ErrBadPosition, p.Offset)
	}
	r.rr = recordReader{r: io.NewSectionReader(r.f, p.Offset, fi.Size()-p.Offset), size: fi.Size() - p.Offset}
	return nil
}

// next returns the next event, io.EOF at the end or at a torn tail.
func (r *eventReader) next() (Entry, error) {
	for {
		rec, n, err := r.rr.next()
		if err == io.EOF || errors.Is(err, ErrTorn) {
			return Entry{}, io.EOF
		}
		if r.resumed && isFraming(err) {
			return Entry{}, fmt.Errorf("%w: no record at offset %d", ErrBadPosition, r.pos.Offset)
		}
		if err == nil && rec.Index != r.pos.Index {
			err = ErrWrongIndex
			if r.resumed {
				err = fmt.Errorf("%w: record at offset %d is %d, not %d", ErrBadPosition, r.pos.Offset, rec.Index, r.pos.Index)
			}
		}
		r.resumed = false
		if err == nil {
			err = r.segs.check(rec)
		}
		if err != nil {
			return Entry{}, err
		}
		off := r.pos.Offset
		r.pos.Index++
		r.pos.Offset += int64(n)
		switch rec.Kind {
		case KindSegmentKey:
			r.seg.wipe()
			if r.seg, err = openSegment(rec, r.identity); err != nil {
				return Entry{}, err
			}
			r.pos.Segment, r.pos.SegmentOffset = rec.Index, off
			continue
		case KindCheckpoint:
			continue
		}
		var ev Event
		if entrySegment(rec) >= 0 {
			ev, err = openEntry(rec, r.seg)
		} else {
			ev, err = openV1(rec, r.identity)
		}
		return Entry{Index: rec.Index, Event: ev, Next: r.pos}, err
	}
}
