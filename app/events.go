package app

import "sync"

// Event names the UI subscribes to.
const (
	EventVaultStatus = "vault:status"
)

// eventSink forwards events to the Wails runtime once it is up. Before
// startup (and in tests) events go to whatever emit function is attached.
//
// Every event carries a sequence number as its second argument, increasing
// across the sink. The transport does not keep order: Wails' dev server
// writes each event from a goroutine of its own, so two states pushed in
// order can arrive in the other; the window's subscribe (backend.ts) drops
// an event older than the last one it applied, so a state pushed later is
// never undone by one pushed before it.
type eventSink struct {
	mu   sync.Mutex
	emit func(name string, data any, seq uint64)
	seq  uint64
}

// attach sets where events go; the sequence number is dropped (tests).
func (s *eventSink) attach(emit func(name string, data any)) {
	if emit == nil {
		s.attachSeq(nil)
		return
	}
	s.attachSeq(func(name string, data any, _ uint64) { emit(name, data) })
}

// attachSeq sets where events go, with their sequence numbers.
func (s *eventSink) attachSeq(emit func(name string, data any, seq uint64)) {
	s.mu.Lock()
	s.emit = emit
	s.mu.Unlock()
}

func (s *eventSink) send(name string, data any) {
	s.mu.Lock()
	emit := s.emit
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if emit != nil {
		emit(name, data, seq)
	}
}
