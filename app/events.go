package app

import "sync"

// Event names the UI subscribes to.
const (
	EventVaultStatus = "vault:status"
)

// eventSink forwards events to the Wails runtime once it is up. Before
// startup (and in tests) events go to whatever emit function is attached.
type eventSink struct {
	mu   sync.Mutex
	emit func(name string, data any)
}

func (s *eventSink) attach(emit func(name string, data any)) {
	s.mu.Lock()
	s.emit = emit
	s.mu.Unlock()
}

func (s *eventSink) send(name string, data any) {
	s.mu.Lock()
	emit := s.emit
	s.mu.Unlock()
	if emit != nil {
		emit(name, data)
	}
}
