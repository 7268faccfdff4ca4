package feed

import (
	"sync"
	"testing"
)

// Events arrive in order, one at a time, and a subscriber may publish,
// subscribe and unsubscribe from inside its callback.
func TestOrderAndReentry(t *testing.T) {
	var f Feed[int]
	var got []int
	var inside bool
	var cancelLate func()
	f.Subscribe(func(n int) {
		if inside {
			t.Fatal("a delivery inside a delivery")
		}
		inside = true
		defer func() { inside = false }()
		got = append(got, n)
		if n == 1 {
			f.Publish(2) // nested: delivered after this one returns
			cancelLate = f.Subscribe(func(m int) { got = append(got, 100+m) })
		}
		if n == 2 {
			cancelLate()
		}
	})
	f.Publish(1)
	f.Publish(3)
	want := []int{1, 2, 3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// Concurrent publishers: every subscriber sees every event exactly once,
// never two at once, and Queue-then-Deliver keeps the order of Queue.
func TestConcurrentPublishers(t *testing.T) {
	var f Feed[int]
	var mu sync.Mutex
	seen := map[int]int{}
	busy := false
	f.Subscribe(func(n int) {
		mu.Lock()
		if busy {
			t.Error("two deliveries at once")
		}
		busy = true
		seen[n]++
		mu.Unlock()
		mu.Lock()
		busy = false
		mu.Unlock()
	})
	var order []int
	f.Subscribe(func(n int) { order = append(order, n) })
	var wg sync.WaitGroup
	var qmu sync.Mutex
	next := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				qmu.Lock() // the publisher's own lock orders its events
				f.Queue(next)
				next++
				qmu.Unlock()
				f.Deliver()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 1600 {
		t.Fatalf("%d distinct events of 1600", len(seen))
	}
	for n, c := range seen {
		if c != 1 {
			t.Fatalf("event %d delivered %d times", n, c)
		}
	}
	for i := range order {
		if order[i] != i {
			t.Fatalf("event %d delivered at %d", order[i], i)
		}
	}
}
