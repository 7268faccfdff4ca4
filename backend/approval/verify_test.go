package approval

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// scriptedVerifier stands for the OS here (the polkit one is tested against
// a real polkitd in backend/presence and backend/keeper): it records what
// it was asked about and answers from results, in order.
type scriptedVerifier struct {
	mu       sync.Mutex
	required func(Request, Via) bool
	asked    []string
	results  []error
	block    chan struct{} // when set, Verify waits for it (or ctx)
}

func (s *scriptedVerifier) Required(r Request, via Via) bool { return s.required(r, via) }

func (s *scriptedVerifier) Verify(ctx context.Context, r Request) (string, error) {
	s.mu.Lock()
	s.asked = append(s.asked, r.ID)
	var err error
	if len(s.results) > 0 {
		err, s.results = s.results[0], s.results[1:]
	}
	block := s.block
	s.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if err != nil {
		return "", err
	}
	return "scripted: the person", nil
}

// An approval that needs verification takes effect only once the person is
// verified, for that card: a refusal leaves the card pending, a second
// approval while one waits is refused, a deny still works meanwhile, and
// the session records what verified the person.
func TestApprovalWaitsForVerification(t *testing.T) {
	b := New(Config{BootID: "boot", Timeout: 10 * time.Second, Epoch: func() uint64 { return 1 }})
	sv := &scriptedVerifier{required: func(r Request, via Via) bool { return via.Surface != SurfaceTerminal }}
	b.SetVerifier(sv)
	ra, rb := run(701, 1, 1), run(702, 2, 1)
	ta, _ := b.RequestSession(ra, Continuity{Change: ChangeFirst}, "http", "a.example")
	tb, _ := b.RequestSession(rb, Continuity{Change: ChangeFirst}, "http", "b.example")

	sv.results = []error{errors.New("wrong password")}
	if err := b.Answer(ta.ID, true, SurfaceApp); !errors.Is(err, ErrNotVerified) {
		t.Fatalf("a failed verification: %v", err)
	}
	if len(b.Pending()) != 2 {
		t.Fatal("a card whose verification failed is no longer pending")
	}
	// Card B is answered by its own verification, never by A's.
	sv.block = make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- b.Answer(tb.ID, true, SurfaceNotification) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		sv.mu.Lock()
		n := len(sv.asked)
		sv.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("card B's verification was never asked")
		}
		time.Sleep(time.Millisecond)
	}
	if err := b.Answer(tb.ID, true, SurfaceApp); !errors.Is(err, ErrVerifying) {
		t.Fatalf("a second approval while one waits: %v", err)
	}
	if len(b.Sessions()) != 0 {
		t.Fatal("a session began before the person was verified")
	}
	close(sv.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s, err := tb.Wait(context.Background())
	if err != nil || s.Via.Verified != "scripted: the person" || s.Via.Surface != SurfaceNotification {
		t.Fatalf("session %+v %v", s.Via, err)
	}
	if got := sv.asked; len(got) != 2 || got[0] != ta.ID || got[1] != tb.ID {
		t.Fatalf("asked about %v", got)
	}
	// Card A is still pending; a deny needs no verification.
	if err := b.Answer(ta.ID, false, SurfaceApp); err != nil {
		t.Fatal(err)
	}
	if len(sv.asked) != 2 {
		t.Fatal("a deny asked for verification")
	}
	// Where the verifier says it is not required (the terminal's code),
	// none is asked.
	rc := run(703, 3, 1)
	tc, _ := b.RequestSession(rc, Continuity{Change: ChangeFirst}, "http", "c.example")
	if err := b.Answer(tc.ID, true, SurfaceTerminal); err != nil || len(sv.asked) != 2 {
		t.Fatalf("terminal approval: %v, asked %v", err, sv.asked)
	}
}

// A card withdrawn while its verification waits is not approved when the
// verification ends.
func TestWithdrawnWhileVerifying(t *testing.T) {
	b := New(Config{BootID: "boot", Timeout: 10 * time.Second, Epoch: func() uint64 { return 1 }})
	sv := &scriptedVerifier{required: func(Request, Via) bool { return true }, block: make(chan struct{})}
	b.SetVerifier(sv)
	r := run(711, 1, 1)
	tk, _ := b.RequestSession(r, Continuity{Change: ChangeFirst}, "http", "a.example")
	done := make(chan error, 1)
	go func() { done <- b.Answer(tk.ID, true, SurfaceApp) }()
	for i := 0; i < 500; i++ {
		sv.mu.Lock()
		n := len(sv.asked)
		sv.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.EndRun(RunID(r), "process_exited")
	if err := <-done; !errors.Is(err, ErrNotPending) {
		t.Fatalf("approval of a card withdrawn during its verification: %v", err)
	}
	if len(b.Sessions()) != 0 {
		t.Fatal("a withdrawn card became a session")
	}
}
