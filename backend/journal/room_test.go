package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logBytes reads the journal's log in dir.
func logBytes(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, LogName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// allZero reports whether b holds nothing but zeros.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// recordsEnd is where the log's records end: replayed as Open does.
func recordsEnd(t *testing.T, b []byte) int64 {
	t.Helper()
	end, err := readFrames(bytes.NewReader(b), func(*Entry) {}, func(Carried, []byte) {})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return end
}

// journalWithACall opens a journal in a new directory and dispatches one
// call with key (its id is q- and the key's number); it returns the
// directory, the database's path and the journal.
func journalWithACall(t *testing.T, key string) (dir, path string, j *Journal) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, FileName)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Dispatch(context.Background(), intent("q-"+strings.TrimPrefix(key, "k-"), key, "B1")); err != nil {
		t.Fatal(err)
	}
	return dir, path, j
}

// TestLogRecordsLandInItsRoom: the log is kept longer than its records,
// zeros made durable ahead, and records are written over them: the file's
// size does not move from call to call (so an fdatasync has no size to
// write), the room follows the records, and a reopened journal reads every
// call back.
func TestLogRecordsLandInItsRoom(t *testing.T) {
	dir, path, j := journalWithACall(t, "k-0")
	ctx := context.Background()
	b := logBytes(t, dir)
	size := int64(len(b))
	end := recordsEnd(t, b)
	if end == 0 || size-end < logRoom*3/4 || !allZero(b[end:]) {
		t.Fatalf("after one call: records end at %d, file %d bytes, zeros after the records: %v; want at least %d bytes of zeros",
			end, size, allZero(b[end:]), logRoom*3/4)
	}
	for i := 1; i < 50; i++ {
		if _, err := j.Dispatch(ctx, intent(fmt.Sprintf("q-%d", i), fmt.Sprintf("k-%d", i), "B1")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, LogName)); err != nil || fi.Size() != size {
			t.Fatalf("call %d changed the log's size from %d: %v %v", i, size, fi.Size(), err)
		}
	}
	j.Close()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := range 50 {
		if e, err := j.Lookup(ctx, "sha256:aa", fmt.Sprintf("k-%d", i)); err != nil || e.State != StateDispatched {
			t.Fatalf("call %d after reopening: %+v %v", i, e, err)
		}
	}
}

// TestLogRoomRunsOutAndGrows: with a small room, calls fill it, and the log
// makes more, a quarter of a rewrite's room at a time (zeros again after
// the records), within the same group commit as the records that needed
// it; an older log with no room at all (as earlier versions wrote it)
// opens, gets room, and loses nothing.
func TestLogRoomRunsOutAndGrows(t *testing.T) {
	old := logRoom
	logRoom = 4 << 10
	defer func() { logRoom = old }()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before := j.Syncs()
	const calls = 100 // about 30 KiB of records: the room is made several times
	for i := range calls {
		if _, err := j.Dispatch(ctx, intent(fmt.Sprintf("q-%d", i), fmt.Sprintf("k-%d", i), "B1")); err != nil {
			t.Fatal(err)
		}
	}
	if s := j.Syncs() - before; s != calls {
		t.Fatalf("%d fsyncs for %d sequential calls: making room took fsyncs of its own", s, calls)
	}
	b := logBytes(t, dir)
	end := recordsEnd(t, b)
	if end < 20<<10 || int64(len(b))-end < logRoom/8 || !allZero(b[end:]) {
		t.Fatalf("records end at %d of %d bytes; zeros after them: %v", end, len(b), allZero(b[end:]))
	}
	// Room added while the log runs is a quarter of a rewrite's: little
	// of it is left unused when the next rewrite drops the file.
	if room := int64(len(b)) - end; room > logRoom/4 {
		t.Fatalf("%d bytes of room left past the records, more than the %d a leader adds", room, logRoom/4)
	}
	j.Close()
	// As an earlier version left it: the records, and nothing after them.
	b = logBytes(t, dir)
	if err := os.Truncate(filepath.Join(dir, LogName), recordsEnd(t, b)); err != nil {
		t.Fatal(err)
	}
	j, err = Open(path)
	if err != nil {
		t.Fatalf("open a log with no room: %v", err)
	}
	defer j.Close()
	for i := range calls {
		if e, err := j.Lookup(ctx, "sha256:aa", fmt.Sprintf("k-%d", i)); err != nil || e.State != StateDispatched {
			t.Fatalf("call %d: %+v %v", i, e, err)
		}
	}
	b = logBytes(t, dir)
	if end := recordsEnd(t, b); int64(len(b))-end < logRoom*3/4 || !allZero(b[end:]) {
		t.Fatalf("no room made at open: records end at %d of %d bytes", end, len(b))
	}
}

// TestBytesPastTheLogsEndAreCleared: a crash during a group commit can
// leave any of its pages on disk, in any order: zeros where its first
// record should start and a whole, valid record of a later call further
// on. That call was never acknowledged, and never sent. Open must not read
// it, and must clear it: a later record written over the zeros could end
// exactly where it starts and bring it back.
func TestBytesPastTheLogsEndAreCleared(t *testing.T) {
	dir, _, j := journalWithACall(t, "k-1")
	ctx := context.Background()
	stale, _ := frame(&Entry{Intent: intent("q-ghost", "k-ghost", "B1"), State: StateDispatched})
	// The frames of this group's first calls never reached the disk: gap
	// zeros, then the last call's record.
	const gap = 1000
	if _, err := j.wal.f.WriteAt(stale, j.wal.end+gap); err != nil {
		t.Fatal(err)
	}
	crashLog := logBytes(t, dir)
	crashed := crashCopy(t, dir)
	j.Close()
	j2, err := Open(filepath.Join(crashed, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j2.Lookup(ctx, "sha256:aa", "k-ghost"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the unacknowledged record past the zeros was read: %v", err)
	}
	if e, err := j2.Lookup(ctx, "sha256:aa", "k-1"); err != nil || e.State != StateDispatched {
		t.Fatalf("the acknowledged call: %+v %v", e, err)
	}
	j2.Close()
	b := logBytes(t, crashed)
	if end := recordsEnd(t, b); !allZero(b[end:]) {
		t.Fatalf("bytes of the torn group are still in the log past its end (%d)", end)
	}

	// Open rewrites the log before anything is appended, which would clear
	// them too; the log's own replay must not depend on that. Reading the
	// crashed log back, then writing a record of exactly the zeros' length:
	// the next replay must end there.
	raw := t.TempDir()
	if err := os.WriteFile(filepath.Join(raw, LogName), crashLog, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := openWAL(raw, DefaultResultDelay)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if cut, err := w.replay(func(*Entry) {}); err != nil || cut != gap+int64(len(stale)) {
		t.Fatalf("replay: cut %d bytes (%v), want %d", cut, err, gap+len(stale))
	}
	filler := Entry{Intent: intent("q-2", "k-2", "B1"), State: StateDispatched}
	fr, _ := frame(&filler)
	filler.Path += string(bytes.Repeat([]byte("p"), gap-len(fr)))
	if fr, _ = frame(&filler); len(fr) != gap {
		t.Fatalf("the filler record is %d bytes, want %d", len(fr), gap)
	}
	if err := w.writeAndSync(fr); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if _, err := readFrames(bytes.NewReader(logBytes(t, raw)), func(e *Entry) { keys = append(keys, e.Key) }, func(Carried, []byte) {}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[k-1 k-2]" {
		t.Fatalf("the log reads back as %v, want [k-1 k-2]", keys)
	}
}

// BenchmarkLogSync is what one small record's durability costs on the
// test's file system: written at the end of a file and fdatasynced (the
// size moves every time, as the log did before it kept room), against
// written over room made ahead, as the log writes now. Run it on the disk
// the data directory lives on; on tmpfs both are nearly free.
func BenchmarkLogSync(b *testing.B) {
	rec := make([]byte, 600)
	for i := range rec {
		rec[i] = byte(i)
	}
	b.Run("append", func(b *testing.B) {
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "log"), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		for b.Loop() {
			if _, err := f.Write(rec); err != nil {
				b.Fatal(err)
			}
			if err := dataSync(f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("room", func(b *testing.B) {
		w, err := openWAL(b.TempDir(), DefaultResultDelay)
		if err != nil {
			b.Fatal(err)
		}
		defer w.close()
		if _, err := w.replay(func(*Entry) {}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := w.writeAndSync(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFoldRunsOnceManyCallsAreFinal: with a fold tick far longer than the
// test, foldAt calls becoming final wake the folder: they move to the
// database and leave memory (all but the last, when the fold ran before
// its record was durable: that one waits for the next), and every one is
// still found.
func TestFoldRunsOnceManyCallsAreFinal(t *testing.T) {
	j, err := OpenWith(filepath.Join(t.TempDir(), FileName), Options{FoldEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx := context.Background()
	live := func() int {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.live)
	}
	for i := range foldAt {
		id := fmt.Sprintf("q-%d", i)
		if _, err := j.Dispatch(ctx, intent(id, "k-"+id, "B1")); err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(ctx, id, Result{Status: 200, Class: "success"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for live() > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d final calls still in memory, %d after they reached foldAt", live(), foldAt)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := range foldAt {
		id := fmt.Sprintf("q-%d", i)
		if e, err := j.Lookup(ctx, "sha256:aa", "k-"+id); err != nil || e.State != StateResult || e.Result.Status != 200 {
			t.Fatalf("%s after the fold: %+v %v", id, e, err)
		}
	}
}
