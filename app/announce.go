package app

import (
	"sync"
	"time"
)

// announcer turns the changes a backend part announces (through its
// backend/feed subscription) into UI events: any number of changes while
// it sends, or within spacing after the last send, become one event. The
// feed delivers changes in order, one at a time, and waits for each
// subscriber; changed never blocks it, and the event is sent from the
// announcer's own goroutine, so a slow window never holds up the vault,
// the gateway or the audit log.
type announcer struct {
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

// newAnnouncer starts the goroutine that calls send after changes, at
// most once per spacing (0: as fast as send returns).
func newAnnouncer(spacing time.Duration, send func()) *announcer {
	a := &announcer{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for {
			select {
			case <-a.kick:
			case <-a.stop:
				return
			}
			send()
			if spacing <= 0 {
				continue
			}
			select {
			case <-time.After(spacing):
			case <-a.stop:
				return
			}
		}
	}()
	return a
}

// changed asks for one more event, without waiting.
func (a *announcer) changed() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// close stops the goroutine and waits for it; changes after it are
// dropped.
func (a *announcer) close() {
	a.stopped.Do(func() { close(a.stop) })
	<-a.done
}
