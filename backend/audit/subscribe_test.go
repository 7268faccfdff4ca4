package audit

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSubscribeAnnouncesDurableRecords: a subscriber hears of records once
// they are on stable storage: once every Append returned, a call has seen
// the whole log (the appender that delivers returns only when the queue is
// empty); calls never overlap; one fsync is at most one call however many
// appenders it covered; a cancelled subscriber hears nothing.
func TestSubscribeAnnouncesDurableRecords(t *testing.T) {
	l := openLog(t, filepath.Join(t.TempDir(), "audit"), 1000)
	defer l.Close()
	var calls, inside atomic.Int64
	var seen atomic.Int64 // the largest head size a call saw
	cancel := l.Subscribe(func() {
		if inside.Add(1) != 1 {
			t.Error("two calls at once")
		}
		calls.Add(1)
		if n := l.Head().Size; n > seen.Load() {
			seen.Store(n)
		}
		inside.Add(-1)
	})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := l.Append(context.Background(), sampleEvent(w*25+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got, want := seen.Load(), l.Head().Size; got != want {
		t.Fatalf("the subscriber saw a log of %d records, the log has %d", got, want)
	}
	l.mu.Lock()
	syncs := l.syncs
	l.mu.Unlock()
	if c := calls.Load(); c == 0 || c > syncs {
		t.Fatalf("%d calls for %d fsyncs", c, syncs)
	}
	cancel()
	before := calls.Load()
	if _, err := l.Append(context.Background(), sampleEvent(1)); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != before {
		t.Fatal("a cancelled subscriber was called")
	}
}
