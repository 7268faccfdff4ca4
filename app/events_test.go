package app

import (
	"sync"
	"testing"
)

// Every event carries a number greater than any sent before it, from
// every goroutine: the window orders what the transport reorders by it.
func TestEventsAreNumberedInSendOrder(t *testing.T) {
	var s eventSink
	var mu sync.Mutex
	last := map[string]uint64{}
	seen := map[uint64]bool{}
	s.attachSeq(func(name string, _ any, seq uint64) {
		mu.Lock()
		defer mu.Unlock()
		if seen[seq] {
			t.Errorf("sequence number %d sent twice", seq)
		}
		seen[seq] = true
		last[name] = max(last[name], seq)
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := []string{"a", "b"}[g%2]
			var prev uint64
			for range 200 {
				s.send(name, nil)
				mu.Lock()
				cur := last[name]
				mu.Unlock()
				if cur <= prev {
					t.Errorf("an event sent after another has a number no greater (%d after %d)", cur, prev)
				}
				prev = cur
			}
		}()
	}
	wg.Wait()
	if len(seen) != 1600 {
		t.Fatalf("%d numbers for 1600 events", len(seen))
	}
}
