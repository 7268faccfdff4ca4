package audit

// writerSegment is the segment appenders seal under, with the number of
// appenders sealing under it right now: its key is wiped once the segment
// has ended and the last of them is done.
type writerSegment struct {
	key   *segmentKey
	users int
	ended bool
}

// startSegmentLocked starts a segment: a fresh key, sealed to the recipient
// in a segment-key record that is durable before any entry is sealed under
// the key. The caller holds l.mu and no ticket is out (no segment means no
// ticket could be taken since the last one ended).
//
// Why durable first: an entry's key exists nowhere but in its segment-key
// record. Were entries written under a key whose record could still be lost
// (a file system may persist later pages of a file before earlier ones), a
// crash could leave entries that nobody can ever read; with the record
// durable first, every entry on disk has its key before it.
func (l *Log) startSegmentLocked() error {
	l.exclusive = true
	defer func() { l.exclusive = false; l.cond.Broadcast() }()
	idx := l.written
	// The X25519 operation runs outside the lock, so that Head and Close
	// are not held up by it; exclusive keeps tickets and checkpoints out.
	l.mu.Unlock()
	key, payload, err := newSegment(l.opts.Recipient, l.key.id, idx)
	l.mu.Lock()
	if uerr := l.usable(); uerr != nil {
		key.wipe()
		return uerr
	}
	if err != nil {
		// Nothing was written and no ticket is out: the log stays usable,
		// but this append cannot be recorded.
		return err
	}
	if len(payload) > MaxBodySize-bodyPrefix {
		key.wipe()
		return l.breakLocked(ErrEntryTooLarge)
	}
	rec := newRecord(KindSegmentKey, l.key.id, idx, len(payload))
	copy(rec[frameHeader+bodyPrefix:], payload)
	if err := l.writeFramed(rec, finishRecord(rec)); err != nil {
		key.wipe()
		return err
	}
	l.opts.crash("segment-key-written")
	if err := l.waitDurable(idx); err != nil {
		key.wipe()
		return err
	}
	l.opts.crash("segment-key-durable")
	l.seg = &writerSegment{key: key}
	l.lastSeg = idx
	return nil
}

// endSegmentLocked ends the current segment: no entry is sealed under its
// key again, and the key is wiped as soon as no appender is sealing with it
// (at once at a checkpoint, which waits for every ticket to land). The
// next Append starts a new segment.
//
// Segments end at every checkpoint: every CheckpointEvery records, at every
// explicit Checkpoint (the gateway and the app call it at vault lock and at
// stop), at Close, and when the log breaks; a new writer (every Open) starts
// with none. So a process that can read the writer's memory reads at most
// the entries since the last checkpoint, and after a vault lock none from
// before it.
func (l *Log) endSegmentLocked() {
	if l.seg == nil {
		return
	}
	l.seg.ended = true
	if l.seg.users == 0 {
		l.seg.key.wipe()
	}
	l.seg = nil
}
