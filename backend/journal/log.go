package journal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// LogName is the journal's write-ahead log inside the data directory, next
// to FileName.
const LogName = "journal.log"

// The log holds the calls written since it was last folded into the
// database: each record is a whole entry (the call's latest state), framed
// as
//
//	length (4 bytes, big endian) | CRC-32C of the payload (4) | payload (JSON)
//
// Replay keeps the last record of each call. A record is acknowledged only
// once a successful fsync covers it; so after a crash the file is a run of
// whole records, possibly followed by a torn one that nobody was told
// about, which replay cuts off.
//
// The file is longer than its records: zeros follow them (the room, about
// logRoom), written and made durable ahead of the records that will
// overwrite them. A record written into the room leaves the file's size and
// blocks as they were, so its fdatasync is the data and a cache flush, not
// the size's metadata too (on this project's ext4 disk 119-125 µs against
// 182-185 µs: BenchmarkLogSync). A length of zero where a record would
// start ends the log: records are never empty.
const (
	frameHeader = 8
	// maxRecordBytes bounds a payload: an entry is a few hundred bytes, a
	// carried audit record at most the audit log's 1 MiB body and its
	// framing; a bound keeps a bad length from allocating.
	maxRecordBytes = 1<<20 + 4<<10
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// logRoom is how much room, in zeros, a log gets when it is opened or
// rewritten: the log is rewritten once it holds 1 MiB (foldThreshold), so
// one rewrite's room usually lasts until the next. When a fold is late and
// the room runs low (under an eighth of logRoom), the group commit's leader
// adds a quarter of it: little room is dropped unused at the next rewrite.
// A variable for the tests.
var logRoom int64 = 1 << 20

// zeros is what room is written with, a block at a time.
var zeros [64 << 10]byte

// logRecord is one entry as written to the log.
type logRecord struct {
	V     int    `json:"v"`
	Entry *Entry `json:"e"`
}

func frame(e *Entry) ([]byte, error) {
	buf := make([]byte, frameHeader, frameHeader+768)
	out := appendRecord(buf, e)
	if out == nil {
		return frameFallback(e)
	}
	payload := out[frameHeader:]
	binary.BigEndian.PutUint32(out, uint32(len(payload)))
	binary.BigEndian.PutUint32(out[4:], crc32Checksum(payload))
	return out, nil
}

func crc32Checksum(p []byte) uint32 { return crc32.Checksum(p, crcTable) }

// errTorn ends a replay at bytes that are not a whole, intact record.
var errTorn = errors.New("journal: torn record at the end of the log")

// readFrames calls fn for every whole entry record of r, carried for every
// carried audit record (with its whole frame), and returns the offset just
// past the last one. The end of r or a zero length ends it (the room
// follows the records); a frame that is cut short, too long, or whose
// checksum or payload is wrong ends the replay there with errTorn: only the
// last, unacknowledged write can look like that. Whether bytes other than
// zeros follow a zero length is replay's to check (lastNonZero).
func readFrames(r io.Reader, fn func(*Entry), carried func(c Carried, frame []byte)) (int64, error) {
	var off int64
	var hdr [frameHeader]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				return off, nil
			}
			if err == io.ErrUnexpectedEOF {
				return off, errTorn
			}
			return off, err
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n == 0 {
			return off, nil
		}
		if n > maxRecordBytes {
			return off, errTorn
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return off, errTorn
			}
			return off, err
		}
		if crc32Checksum(payload) != binary.BigEndian.Uint32(hdr[4:]) {
			return off, errTorn
		}
		if payload[0] == carriedKind {
			c, ok := parseCarried(payload)
			if !ok {
				return off, errTorn
			}
			carried(c, append(hdr[:], payload...))
			off += int64(frameHeader + n)
			continue
		}
		var rec logRecord
		if err := json.Unmarshal(payload, &rec); err != nil || rec.V != 1 || rec.Entry == nil || rec.Entry.ID == "" {
			return off, errTorn
		}
		fn(rec.Entry)
		off += int64(frameHeader + n)
	}
}

// walFile is the open log with its group commit. Appends add frames to a
// buffer; the first caller that needs them durable writes the whole buffer
// with one write and one fsync for everyone who appended meanwhile (the
// others wait), so concurrent calls share fsyncs.
type walFile struct {
	dir  string
	path string

	mu    sync.Mutex
	cond  sync.Cond
	f     *os.File
	buf   []byte
	spare []byte
	size  int64 // bytes of records written or in buf
	// end is where the next write goes (the bytes of records written) and
	// room the file's size, zeros from end on. Only the group's leader
	// (syncing) or a holder of mu with no leader running touches them.
	end, room int64
	seq       uint64 // frames appended
	durable   uint64 // frames covered by a successful fsync
	syncing   bool
	broken    error
	syncs     int64

	// Records queued without a wait (soon) are made durable by the next
	// group commit, or by the flush armed for resultDelay after them.
	resultDelay time.Duration
	flushArmed  bool
	flushTarget uint64 // the frames the armed flush covers

	// beforeDrop makes the audit log's file durable before a rewrite drops
	// the copies carried for it (Journal.CarrySync); leftover are the
	// carried frames an earlier process left, kept through rewrites until
	// an audit log attaches (it restored them when it was opened).
	beforeDrop func() error
	leftover   [][]byte

	// hookBeforeSync runs with frames written and not yet synced (crash
	// tests kill the process there).
	hookBeforeSync func()
}

// ErrBroken: a write or fsync of the log failed. Nothing after it can be
// trusted to be on disk, so the journal refuses every later write until it
// is reopened (the gateway then refuses calls: it cannot record them).
var ErrBroken = errors.New("journal: the log failed earlier and refuses writes until reopened")

func openWAL(dir string, resultDelay time.Duration) (*walFile, error) {
	path := filepath.Join(dir, LogName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: open log: %w", err)
	}
	w := &walFile{dir: dir, path: path, f: f, resultDelay: resultDelay}
	w.cond.L = &w.mu
	return w, nil
}

// replay reads the log, cuts off a torn tail and makes the room. What
// follows the last whole record must be zeros: bytes of a torn group
// commit can lie there, even past zeros (the kernel writes a group's pages
// back in any order), and a later, shorter record written over their start
// could line up with one of them and bring an unacknowledged record back.
// So anything but zeros past the end is cut, and the cut is made durable
// (with the room made after it, in one fdatasync) before anything is
// written after it. cut counts the bytes that were not zeros.
func (w *walFile) replay(fn func(*Entry)) (cut int64, err error) {
	fi, err := w.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	size := fi.Size()
	end, rerr := readFrames(io.NewSectionReader(w.f, 0, size), fn, func(_ Carried, frame []byte) {
		w.leftover = append(w.leftover, frame)
	})
	if rerr != nil && !errors.Is(rerr, errTorn) {
		return 0, fmt.Errorf("journal: read log: %w", rerr)
	}
	if cut, err = lastNonZero(w.f, end, size); err != nil {
		return 0, fmt.Errorf("journal: read log: %w", err)
	}
	if cut > 0 {
		cut -= end
		if err := w.f.Truncate(end); err != nil {
			return 0, fmt.Errorf("journal: cut torn log tail: %w", err)
		}
		size = end
	}
	w.size, w.end, w.room = end, end, size
	// After a cut no room is left, so this always runs then.
	if w.room-w.end < logRoom/4 {
		if err := w.makeRoom(end, logRoom); err != nil {
			return 0, fmt.Errorf("journal: make room in the log: %w", err)
		}
		if err := dataSync(w.f); err != nil {
			return 0, fmt.Errorf("journal: make room in the log: %w", err)
		}
	}
	return cut, nil
}

// lastNonZero returns the offset just past the last byte of f in
// [from, to) that is not zero, or 0 when they all are.
func lastNonZero(f *os.File, from, to int64) (int64, error) {
	var last int64
	buf := make([]byte, len(zeros))
	for off := from; off < to; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), to-off)], off)
		for i := n - 1; i >= 0; i-- {
			if buf[i] != 0 {
				last = off + int64(i) + 1
				break
			}
		}
		off += int64(n)
		if err != nil {
			if err == io.EOF {
				break
			}
			return 0, err
		}
	}
	return last, nil
}

// makeRoom writes zeros from the larger of w.room and from up to n bytes
// past from, and moves w.room there. The caller syncs.
func (w *walFile) makeRoom(from, n int64) error {
	want := from + n
	for off := max(w.room, from); off < want; {
		n, err := w.f.WriteAt(zeros[:min(int64(len(zeros)), want-off)], off)
		if err != nil {
			return err
		}
		off += int64(n)
	}
	w.room = max(w.room, want)
	return nil
}

// append queues a frame and returns its sequence number for wait.
func (w *walFile) append(frame []byte) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return 0, w.broken
	}
	w.buf = append(w.buf, frame...)
	w.size += int64(len(frame))
	w.seq++
	return w.seq, nil
}

// wait returns once frame seq is durable.
func (w *walFile) wait(seq uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.durable < seq {
		if w.broken != nil {
			return w.broken
		}
		if w.syncing {
			w.cond.Wait()
			continue
		}
		// Lead this group: write everything appended so far, fsync once.
		data, target := w.buf, w.seq
		w.buf, w.spare = w.spare[:0], nil
		w.syncing = true
		w.mu.Unlock()
		err := w.writeAndSync(data)
		w.mu.Lock()
		w.syncing = false
		w.settle(data, target, err)
	}
	return nil
}

// writeAndSync writes a group's frames with one write at the log's end and
// fsyncs them. When the room left after them is under an eighth of
// logRoom, a quarter more is made first, and the same fsync covers it
// (only when a fold is late to rewrite the log).
func (w *walFile) writeAndSync(data []byte) error {
	_, err := w.f.WriteAt(data, w.end)
	if err == nil {
		w.end += int64(len(data))
		if w.room-w.end < logRoom/8 {
			err = w.makeRoom(w.end, logRoom/4)
		}
	}
	if err == nil && w.hookBeforeSync != nil {
		w.hookBeforeSync()
	}
	if err == nil {
		err = dataSync(w.f)
	}
	return err
}

// settle records how a group commit of the frames up to target ended, with
// w.mu held, and wakes its waiters. After a failed write or fsync the
// kernel may have dropped what it held; nothing written since the last
// good sync can be trusted, so nothing more is acknowledged.
func (w *walFile) settle(data []byte, target uint64, err error) {
	w.spare = data[:0]
	w.syncs++
	if err != nil {
		w.broken = fmt.Errorf("%w: %w", ErrBroken, err)
	} else {
		w.durable = target
	}
	w.cond.Broadcast()
}

// soon makes the frames appended so far durable without making the caller
// wait: the next group commit covers them, which another call's wait
// usually leads. If none has by resultDelay, the armed flush checks again:
// covered, it re-arms only for frames appended since; not covered, it
// leads a commit itself. So a frame is durable within 2×resultDelay of
// soon, and a steady stream of calls adds no fsync of its own.
func (w *walFile) soon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armLocked()
}

func (w *walFile) armLocked() {
	if w.flushArmed || w.durable >= w.seq || w.broken != nil {
		return
	}
	w.flushArmed, w.flushTarget = true, w.seq
	time.AfterFunc(w.resultDelay, w.flushDue)
}

func (w *walFile) flushDue() {
	w.mu.Lock()
	w.flushArmed = false
	target := w.flushTarget
	if w.durable >= target {
		w.armLocked() // covered by another commit; frames since then, if any, get their own
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	// A failure breaks the log; the next Dispatch sees it and is refused.
	_ = w.wait(target)
}

// sizeNow is the log's size, written or buffered.
func (w *walFile) sizeNow() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// durableSeq is the number of frames covered by a successful fsync.
func (w *walFile) durableSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.durable
}

// flushLocked writes and fsyncs the frames in the buffer while w.mu is held
// and no group commit runs (rewrite's case: it must not write its snapshot
// before frames already acknowledged to soon's callers).
func (w *walFile) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	data, target := w.buf, w.seq
	w.buf = w.spare[:0]
	w.settle(data, target, w.writeAndSync(data))
	return w.broken
}

// newLogFile is the next log, before rewrite fills it: a temporary file
// holding logRoom zeros, made durable. It is made before the rewrite takes
// its locks (fold), so the calls that wait on a rewrite do not wait for the
// room's megabyte to reach the disk too.
func (w *walFile) newLogFile() (*os.File, error) {
	tmp, err := os.CreateTemp(w.dir, "."+LogName+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("journal: rewrite log: %w", err)
	}
	next := &walFile{f: tmp}
	err = next.makeRoom(0, logRoom)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = dataSync(tmp)
	}
	if err != nil {
		dropLogFile(tmp)
		return nil, fmt.Errorf("journal: rewrite log: %w", err)
	}
	return tmp, nil
}

// dropLogFile closes and removes a next log that was not used.
func dropLogFile(f *os.File) {
	if f != nil {
		f.Close()
		os.Remove(f.Name())
	}
}

// rewrite replaces the log with the frames of entries (the calls not yet in
// the database): write them at the start of tmp (from newLogFile; nil makes
// one here), fsync it, rename it over the log, fsync the directory. A crash
// at any point leaves the old log or the new one, each of which replays to
// the same calls. Appends wait meanwhile. Carried audit records are dropped
// once the audit log has made its file durable (beforeDrop); the ones an
// earlier process left stay until an audit log attaches. rewrite owns tmp.
func (w *walFile) rewrite(entries []*Entry, tmp *os.File) error {
	ok := false
	defer func() {
		if !ok {
			dropLogFile(tmp)
		}
	}()
	if tmp == nil {
		var err error
		if tmp, err = w.newLogFile(); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.syncing {
		w.cond.Wait()
	}
	if w.broken != nil {
		return w.broken
	}
	// Frames queued since the last commit go first, so that the snapshot
	// (the newest state of every call still live) follows them.
	if err := w.flushLocked(); err != nil {
		return err
	}
	if w.beforeDrop != nil {
		if err := w.beforeDrop(); err != nil {
			return fmt.Errorf("journal: rewrite log: the audit log could not make its carried records durable: %w", err)
		}
	}
	// The frames go over the new file's zeros, as appends do; a snapshot
	// larger than the room grows the file, and more room follows it.
	next := &walFile{f: tmp, room: logRoom}
	var snap []byte
	for _, fr := range w.leftover {
		snap = append(snap, fr...)
	}
	for _, e := range entries {
		fr, err := frame(e)
		if err != nil {
			return err
		}
		snap = append(snap, fr...)
	}
	if _, err := tmp.WriteAt(snap, 0); err != nil {
		return fmt.Errorf("journal: rewrite log: %w", err)
	}
	next.end = int64(len(snap))
	if next.room-next.end < logRoom/4 {
		if err := next.makeRoom(next.end, logRoom); err != nil {
			return fmt.Errorf("journal: rewrite log: %w", err)
		}
	}
	if err := dataSync(tmp); err != nil {
		return fmt.Errorf("journal: rewrite log: %w", err)
	}
	// Closed before the rename: Windows refuses to replace an open file.
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("journal: rewrite log: %w", err)
	}
	w.f.Close()
	renameErr := os.Rename(tmp.Name(), w.path)
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		os.Remove(tmp.Name())
		w.broken = fmt.Errorf("%w: reopen log: %w", ErrBroken, err)
		return w.broken
	}
	w.f = f
	ok = true // tmp is closed; what is left of it is handled here
	if renameErr != nil {
		os.Remove(tmp.Name())
		// The old log is still in place and whole: appends go on there,
		// at its end as before.
		return fmt.Errorf("journal: rewrite log: %w", renameErr)
	}
	// Without this the rename may not survive a crash: the old log then
	// comes back, which replays to the same calls, so it is safe either way.
	_ = syncDir(w.dir)
	w.size, w.end, w.room = next.end, next.end, next.room
	return nil
}

// close makes what soon queued durable, then closes the log.
func (w *walFile) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.syncing {
		w.cond.Wait()
	}
	var err error
	if w.broken == nil {
		err = w.flushLocked()
		w.broken = ErrClosed
	}
	return errors.Join(err, w.f.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
