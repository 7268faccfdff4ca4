// Package feed delivers a publisher's events to its subscribers, with one
// contract everywhere Yett announces a change (the vault's lock and unlock,
// the approval broker's cards and sessions, OAuth custody's changes):
//
//   - Events reach every subscriber in the order they were published, one at
//     a time: a subscriber never sees two events at once, nor a later one
//     before an earlier one.
//   - Delivery happens on the publishing goroutine, after the publisher's
//     own locks are released (Publish, or Queue under the lock and Deliver
//     after it), unless another goroutine is delivering already: then that
//     one delivers the new event next, and Publish returns at once.
//   - A subscriber may call back into the publisher, subscribe, unsubscribe
//     and publish from inside its callback: a nested event is queued and
//     delivered after the current one, never re-entrantly.
//   - A subscriber added during a delivery receives the events published
//     after it subscribed; one removed stops receiving at once, except for
//     a callback already running.
//
// So callers need no goroutine of their own to avoid deadlocks; a
// subscriber that does slow work (network, disk) should hand it off itself,
// since every later event waits for it.
package feed

import "sync"

// Feed is one publisher's list of subscribers and queue of events. The zero
// value is ready to use; it must not be copied after first use.
type Feed[T any] struct {
	mu         sync.Mutex
	subs       []sub[T]
	next       int
	queue      []T
	delivering bool
}

type sub[T any] struct {
	id int
	fn func(T)
}

// Subscribe registers fn for every event published from now on and returns
// the function that removes it.
func (f *Feed[T]) Subscribe(fn func(T)) (cancel func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.next
	f.next++
	f.subs = append(f.subs, sub[T]{id, fn})
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, s := range f.subs {
			if s.id == id {
				f.subs = append(f.subs[:i:i], f.subs[i+1:]...)
				return
			}
		}
	}
}

// Queue adds ev to the events to deliver without delivering it. A publisher
// that must order events by its own state changes queues them under its
// own lock, and calls Deliver once it released the lock.
func (f *Feed[T]) Queue(ev T) {
	f.mu.Lock()
	f.queue = append(f.queue, ev)
	f.mu.Unlock()
}

// Deliver delivers the queued events, unless another goroutine is already
// delivering (which will deliver them). Call it without holding any lock
// a subscriber might take.
func (f *Feed[T]) Deliver() {
	f.mu.Lock()
	if f.delivering {
		f.mu.Unlock()
		return
	}
	f.delivering = true
	for len(f.queue) > 0 {
		ev := f.queue[0]
		f.queue = f.queue[1:]
		subs := append([]sub[T](nil), f.subs...)
		f.mu.Unlock()
		for _, s := range subs {
			if f.live(s.id) {
				s.fn(ev)
			}
		}
		f.mu.Lock()
	}
	f.queue = nil
	f.delivering = false
	f.mu.Unlock()
}

// Publish queues ev and delivers it: Queue then Deliver.
func (f *Feed[T]) Publish(ev T) {
	f.Queue(ev)
	f.Deliver()
}

// live reports whether subscriber id is still subscribed, so that one
// cancelled during a delivery gets no later event of it.
func (f *Feed[T]) live(id int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.subs {
		if s.id == id {
			return true
		}
	}
	return false
}
