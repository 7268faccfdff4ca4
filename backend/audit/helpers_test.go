package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
)

// testIdentity is a fixed age identity, so golden files can be re-read.
const testIdentity = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"

func identity(t testing.TB) *age.X25519Identity {
	t.Helper()
	id, err := age.ParseX25519Identity(testIdentity)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

var t0 = time.Date(2026, 7, 22, 14, 20, 11, 0, time.UTC)

// sampleEvent returns the i-th event of a plausible session.
func sampleEvent(i int) Event {
	e := Event{Time: t0.Add(time.Duration(i) * time.Second), BootID: "B8", VaultEpoch: 17}
	switch i % 4 {
	case 0:
		e.Type, e.SessionID = EventSessionApproved, fmt.Sprintf("R%d", i)
		e.Run = &RunBinding{RunID: fmt.Sprintf("R%d", i), PID: 48192 + i, StartTime: t0,
			Executable: "/usr/bin/claude", ExecutableHash: "ab", Signer: "unsigned", LaunchNonce: "n1"}
	case 1:
		e.Type = EventActionRequested
		e.Action = &Action{RequestID: fmt.Sprintf("Q%d", i), Channel: "http", Operation: "create_issue", Target: "api.example.com"}
	case 2:
		e.Type, e.Reason = EventActionDenied, ReasonVaultLocked
		e.Action = &Action{RequestID: fmt.Sprintf("Q%d", i), Channel: "http", Operation: "create_issue", Target: "api.example.com"}
	default:
		e.Type = EventActionResult
		e.Result = &Result{Class: ResultSuccess, Status: 201, Bytes: 512, DurationMS: 80}
	}
	return e
}

// openLog opens a log in dir with the test recipient.
func openLog(t testing.TB, dir string, every int64) *Log {
	t.Helper()
	l, _, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient(), CheckpointEvery: every, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// writeLog makes a closed log of n events in a new directory.
func writeLog(t testing.TB, n int, every int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, every)
	for i := range n {
		if _, err := l.Append(context.Background(), sampleEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testSegment is a segment key with fixed bytes, for tests that seal by hand.
func testSegment(t testing.TB, index int64) *segmentKey {
	t.Helper()
	key := make([]byte, segmentKeyLen)
	for i := range key {
		key[i] = byte(0x40 + i)
	}
	seg, err := newSegmentKey(index, key)
	if err != nil {
		t.Fatal(err)
	}
	return seg
}
