package credimport

import (
	"crypto/rand"
	"sync"
	"time"
)

// Held keeps what was read while the person chooses, each Source under an
// opaque id that Take gives out once. A Source nobody takes is wiped when
// its time is up, when Drop or DropAll is called (the vault locked), or
// when more than the most kept are put (the oldest goes first), so values
// never outlive the choosing by more than the time given.
type Held struct {
	ttl  time.Duration
	most int

	mu    sync.Mutex
	held  map[string]*heldSource
	order []string // oldest first
	// wiped, when set (tests), is told each id that was wiped unclaimed.
	wiped func(id string)
}

type heldSource struct {
	src   *Source
	timer *time.Timer
}

// NewHeld keeps each Source for ttl, and at most most of them at once.
func NewHeld(ttl time.Duration, most int) *Held {
	if most < 1 {
		most = 1
	}
	return &Held{ttl: ttl, most: most, held: map[string]*heldSource{}}
}

// Put keeps src and returns its id and when it is wiped unless taken.
func (h *Held) Put(src *Source) (id string, until time.Time) {
	id = rand.Text()
	until = time.Now().Add(h.ttl)
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.order) >= h.most {
		h.dropLocked(h.order[0])
	}
	h.held[id] = &heldSource{src: src, timer: time.AfterFunc(h.ttl, func() { h.Drop(id) })}
	h.order = append(h.order, id)
	return id, until
}

// Take hands over the Source kept under id and forgets it: a second Take
// of the same id, or one after it was wiped, finds nothing. The caller
// wipes what it took.
func (h *Held) Take(id string) (*Source, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs, ok := h.held[id]
	if !ok {
		return nil, false
	}
	hs.timer.Stop()
	h.forgetLocked(id)
	return hs.src, true
}

// Drop wipes what is kept under id, if anything.
func (h *Held) Drop(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(id)
}

// DropAll wipes everything kept.
func (h *Held) DropAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.order) > 0 {
		h.dropLocked(h.order[0])
	}
}

// Len is how many Sources are kept.
func (h *Held) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

func (h *Held) dropLocked(id string) {
	hs, ok := h.held[id]
	if !ok {
		return
	}
	hs.timer.Stop()
	hs.src.Wipe()
	h.forgetLocked(id)
	if h.wiped != nil {
		h.wiped(id)
	}
}

func (h *Held) forgetLocked(id string) {
	delete(h.held, id)
	for i, o := range h.order {
		if o == id {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
}
