package audit

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// A record written with AppendSoon is in the file at once and durable with
// the next Append's commit: sequential intent-then-result pairs cost one
// fsync each. Subscribers hear of it once it is durable.
func TestAppendSoonRidesTheNextCommit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, _, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient(), ResultDelay: time.Hour, CheckpointAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var heard atomic.Int64
	defer l.Subscribe(func() { heard.Add(1) })()
	if _, err := l.Append(ctx, sampleEvent(1)); err != nil { // starts the segment
		t.Fatal(err)
	}
	const n = 40
	before, heardBefore := l.Syncs(), heard.Load()
	for i := range n {
		if _, err := l.Append(ctx, sampleEvent(1)); err != nil {
			t.Fatal(err)
		}
		idx, err := l.AppendSoon(ctx, sampleEvent(3))
		if err != nil {
			t.Fatal(err)
		}
		if i == n-1 {
			l.mu.Lock()
			durable := l.durable
			l.mu.Unlock()
			if durable != idx {
				t.Fatalf("durable %d with the last result at %d: it should be the one record waiting", durable, idx)
			}
		}
	}
	if c := l.Syncs() - before; c != n {
		t.Fatalf("%d fsyncs for %d intent-result pairs, want one each", c, n)
	}
	if h := heard.Load() - heardBefore; h != n {
		t.Fatalf("subscribers heard %d times, want %d (once per commit)", h, n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact || rep.Torn != nil {
		t.Fatalf("verify after Close: %v %v", rep.Status, rep.Err)
	}
	results := 0
	for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type == EventActionResult {
			results++
		}
	}
	if results != n {
		t.Fatalf("%d results read back, want %d", results, n)
	}
}

// With no Append after it, the log makes an AppendSoon record durable by
// itself, within twice the result delay, and tells subscribers.
func TestAppendSoonFlushesByItself(t *testing.T) {
	l, _, err := Open(Options{Dir: filepath.Join(t.TempDir(), "audit"), Recipient: identity(t).Recipient(),
		ResultDelay: time.Millisecond, CheckpointAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	l.Append(ctx, sampleEvent(1))
	heard := make(chan struct{}, 8)
	defer l.Subscribe(func() { heard <- struct{}{} })()
	before := l.Syncs()
	if _, err := l.AppendSoon(ctx, sampleEvent(3)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heard:
	case <-time.After(10 * time.Second):
		t.Fatal("the record never became durable")
	}
	if c := l.Syncs() - before; c != 1 {
		t.Fatalf("%d fsyncs for one record", c)
	}
}
