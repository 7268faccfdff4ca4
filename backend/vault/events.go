package vault

// EventKind names a vault state change.
type EventKind string

const (
	EventLocked   EventKind = "locked"
	EventUnlocked EventKind = "unlocked"
	EventCreated  EventKind = "created"
	EventReset    EventKind = "reset"
	EventChanged  EventKind = "changed" // credentials or settings changed, or the epoch advanced while locked
)

// Event is delivered to subscribers after the change it reports is durable.
type Event struct {
	Kind   EventKind `json:"kind"`
	Epoch  uint64    `json:"epoch"`
	Reason string    `json:"reason,omitempty"`
	// EpochNotSaved: the change happened and the epoch moved, in memory
	// only: the disk refused the new value (see ErrEpochNotSaved).
	EpochNotSaved bool `json:"epoch_not_saved,omitempty"`
}

// Subscribe registers fn for every later event and returns a cancel func.
//
// Events are delivered in the order the changes happened, one at a time,
// never while the vault's mutex is held, so fn may call any Vault method
// (including Status or Lock). Delivery is synchronous: the goroutine that
// made the change delivers it before returning, unless another goroutine
// is already delivering, in which case that one delivers it next.
func (v *Vault) Subscribe(fn func(Event)) (cancel func()) {
	v.evMu.Lock()
	defer v.evMu.Unlock()
	id := v.nextSub
	v.nextSub++
	v.subs = append(v.subs, subscriber{id, fn})
	return func() {
		v.evMu.Lock()
		defer v.evMu.Unlock()
		for i, s := range v.subs {
			if s.id == id {
				v.subs = append(v.subs[:i:i], v.subs[i+1:]...)
				return
			}
		}
	}
}

type subscriber struct {
	id int
	fn func(Event)
}

// enqueue is called with v.mu held, so the queue order is the order of the
// state changes.
func (v *Vault) enqueue(e Event) {
	v.evMu.Lock()
	v.queue = append(v.queue, e)
	v.evMu.Unlock()
}

// deliver is called without v.mu. Only one goroutine drains at a time; a
// subscriber that causes another event appends to the queue and the loop
// delivers it after the current one.
func (v *Vault) deliver() {
	v.evMu.Lock()
	if v.delivering {
		v.evMu.Unlock()
		return
	}
	v.delivering = true
	for len(v.queue) > 0 {
		e := v.queue[0]
		v.queue = v.queue[1:]
		subs := append([]subscriber(nil), v.subs...)
		v.evMu.Unlock()
		for _, s := range subs {
			s.fn(e)
		}
		v.evMu.Lock()
	}
	v.delivering = false
	v.evMu.Unlock()
}
