package audit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func waitVerified(t *testing.T, l *Log) Report {
	t.Helper()
	select {
	case <-l.Verified():
	case <-time.After(20 * time.Second):
		t.Fatal("background verification did not finish")
	}
	v := l.Verification()
	if v.Running {
		t.Fatal("verification done but still running")
	}
	return v.Report
}

// Open checks only the records after the signed tree state and verifies the
// rest in the background; an intact log opens, appends and verifies.
func TestOpenFromTreeState(t *testing.T) {
	dir := writeLog(t, 30, 8)
	if _, err := os.Stat(filepath.Join(dir, TreeStateFile)); err != nil {
		t.Fatal("no tree state after a checkpoint")
	}
	l, orep, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	full := Verify(filepath.Join(dir, LogFile), VerifyOptions{})
	if !orep.Background || orep.Verify.Entries != full.Entries || orep.Verify.Head != full.Head {
		t.Fatalf("open: background %v, %d entries %v; the log has %d %v", orep.Background, orep.Verify.Entries, orep.Verify.Head, full.Entries, full.Head)
	}
	if l.Head() != full.Head {
		t.Fatalf("writer head %v, log %v", l.Head(), full.Head)
	}
	if rep := waitVerified(t, l); rep.Status != StatusIntact || rep.Head != full.Head {
		t.Fatalf("background: %v %v: %v", rep.Status, rep.Head, rep.Err)
	}
	if _, err := l.Append(context.Background(), sampleEvent(1)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact {
		t.Fatal(rep.Err)
	}
}

// Records after the tree state (a crash before the next checkpoint) are
// checked by Open itself; the state is older than the checkpoint file when a
// crash fell between writing the file and writing the state.
func TestOpenTailAfterTreeState(t *testing.T) {
	dir := writeLog(t, 10, 4)
	state := mustRead(t, filepath.Join(dir, TreeStateFile))
	l := openLog(t, dir, 100)
	for i := range 5 {
		if _, err := l.Append(context.Background(), sampleEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// Put the older state back: it is 7 records behind the checkpoint file.
	os.WriteFile(filepath.Join(dir, TreeStateFile), state, 0o644)
	l, orep, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !orep.Background {
		t.Fatal("an older tree state was not used")
	}
	if rep := waitVerified(t, l); rep.Status != StatusIntact {
		t.Fatal(rep.Err)
	}
	if l.Head() != Verify(filepath.Join(dir, LogFile), VerifyOptions{}).Head {
		t.Fatal("writer head differs from the log's")
	}
}

// A tree state that is missing, malformed, of another log, newer than the
// checkpoint or simply wrong is never evidence: Open falls back to reading
// the whole log, which decides (here: intact).
func TestOpenIgnoresBadTreeState(t *testing.T) {
	dir := writeLog(t, 10, 4)
	good := mustRead(t, filepath.Join(dir, TreeStateFile))
	other := mustRead(t, filepath.Join(writeLog(t, 10, 4), TreeStateFile))
	st, err := parseTreeState(good)
	if err != nil {
		t.Fatal(err)
	}
	wrongHash := st
	wrongHash.tree = st.tree.clone()
	wrongHash.tree.stack[0][0] ^= 1
	wrongOffset := st
	wrongOffset.offset -= 7
	ahead := st
	ahead.tree.n++ // larger than the checkpoint file signs
	for name, b := range map[string][]byte{
		"missing":       nil,
		"garbage":       []byte("yett-audit-tree-state v1\nsize x\n"),
		"another log":   other,
		"wrong hash":    wrongHash.marshal(),
		"wrong offset":  wrongOffset.marshal(),
		"ahead of file": ahead.marshal(),
	} {
		t.Run(name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, TreeStateFile))
			if b != nil {
				os.WriteFile(filepath.Join(dir, TreeStateFile), b, 0o644)
			}
			l, orep, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if orep.Background || orep.Verify.Status != StatusIntact {
				t.Fatalf("background %v status %v: %v", orep.Background, orep.Verify.Status, orep.Verify.Err)
			}
			if v := l.Verification(); v.Running || v.Report.Status != StatusIntact {
				t.Fatalf("verification %+v", v)
			}
		})
	}
}

// An edit before the tree state is found by the background verification:
// the log then refuses appends as Open refuses a tampered log, the tree state
// is dropped, and the next Open reads everything and refuses at once.
func TestOpenBackgroundFailureStopsAppends(t *testing.T) {
	dir := writeLog(t, 20, 4)
	logPath := filepath.Join(dir, LogFile)
	b := mustRead(t, logPath)
	sp := spans(t, b)
	s := sp[2] // an entry of the first segment, long signed
	b[s.off+s.n-frameTrailer-1] ^= 1
	refix(b, s)
	os.WriteFile(logPath, b, 0o600)

	l, orep, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
	if err != nil || !orep.Background {
		t.Fatalf("open: background %v: %v", orep.Background, err)
	}
	rep := waitVerified(t, l)
	if rep.Status != StatusTampered || !errors.Is(rep.Err, ErrCheckpointMismatch) {
		t.Fatalf("background verification: %v %v", rep.Status, rep.Err)
	}
	if _, err := l.Append(context.Background(), sampleEvent(1)); !errors.Is(err, ErrTampered) {
		t.Fatalf("append after a failed verification: %v", err)
	}
	if _, err := l.Checkpoint(); !errors.Is(err, ErrTampered) {
		t.Fatalf("checkpoint after a failed verification: %v", err)
	}
	l.Close()
	if !bytes.Equal(mustRead(t, logPath), b) {
		t.Fatal("the log changed after the failed verification")
	}
	if _, err := os.Stat(filepath.Join(dir, TreeStateFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("tree state kept after a failed verification: %v", err)
	}
	if _, orep, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()}); !errors.Is(err, ErrTampered) || orep.Background {
		t.Fatalf("reopen: %v (background %v)", err, orep.Background)
	}
}

// Close stops a running background verification without breaking anything.
func TestCloseStopsBackgroundVerification(t *testing.T) {
	dir := writeLog(t, 50, 4)
	for range 5 {
		l, orep, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
		if err != nil || !orep.Background {
			t.Fatalf("open: %v %v", orep.Background, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		<-l.Verified()
	}
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact {
		t.Fatal(rep.Err)
	}
}

func TestTreeStateRoundTrip(t *testing.T) {
	var tr compactTree
	for n := range 70 {
		st := treeState{logID: LogID{1, 2}, tree: tr.clone(), offset: int64(n) * 100, lastCPRec: int64(n) - 1, segment: -1}
		got, err := parseTreeState(st.marshal())
		if err != nil {
			t.Fatalf("size %d: %v", n, err)
		}
		if got.logID != st.logID || got.tree.n != st.tree.n || !slices.Equal(got.tree.stack, st.tree.stack) || got.offset != st.offset {
			t.Fatalf("size %d: round trip %+v", n, got)
		}
		tr.push(leafOf(n))
	}
}

func leafOf(n int) [32]byte {
	return [32]byte{byte(n), byte(n >> 8), 1}
}

// FuzzTreeState parses arbitrary tree-state files: what parses re-renders to
// exactly the same bytes (one encoding), and nothing panics.
func FuzzTreeState(f *testing.F) {
	dir := writeLog(f, 5, 2)
	f.Add(mustRead(f, filepath.Join(dir, TreeStateFile)))
	f.Add([]byte("yett-audit-tree-state v1\nlog 00000000000000000000000000000000\nsize 0\noffset 0\ncheckpoint -1\nsegment -1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseTreeState(b)
		if err != nil {
			return
		}
		if !bytes.Equal(st.marshal(), b) {
			t.Fatalf("tree state does not re-render: %q", b)
		}
		st.tree.root()
	})
}
