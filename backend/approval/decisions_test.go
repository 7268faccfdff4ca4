package approval

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The broker remembers how each card ended, where it was answered and by
// whom, newest first; the first answer wins and a second is told the card
// is gone.
func TestDecisionsAndFirstAnswerWins(t *testing.T) {
	b, _, _ := newBroker(t, 50*time.Millisecond)
	r := run(900, 1, 9)
	tk, _ := b.RequestSession(r, Continuity{Change: ChangeFirst}, "http", "h")
	if err := b.Answer(tk.ID, true, SurfaceNotification); err != nil {
		t.Fatal(err)
	}
	if err := b.Answer(tk.ID, false, SurfaceApp); !errors.Is(err, ErrNotPending) {
		t.Fatalf("second answer: %v", err)
	}
	r2 := run(901, 2, 9)
	tk2, _ := b.RequestSession(r2, Continuity{Change: ChangeFirst}, "http", "h")
	b.Answer(tk2.ID, false, SurfaceTerminal)
	tk3, _ := b.RequestSession(run(902, 3, 9), Continuity{Change: ChangeFirst}, "http", "h")
	if _, err := tk3.Wait(context.Background()); !errors.Is(err, ErrTimeout) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var ds []Decision
	for time.Now().Before(deadline) {
		if ds = b.Decisions(); len(ds) == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if len(ds) != 3 {
		t.Fatalf("decisions %+v", ds)
	}
	want := []struct {
		id      string
		o       Outcome
		surface string
	}{{tk3.ID, OutcomeExpired, ""}, {tk2.ID, OutcomeDenied, SurfaceTerminal}, {tk.ID, OutcomeApproved, SurfaceNotification}}
	for i, w := range want {
		d := ds[i]
		if d.RequestID != w.id || d.Outcome != w.o || d.Surface != w.surface || (w.surface != "") != (d.By != "") || d.Who.PID == 0 {
			t.Errorf("decision %d: %+v, want %+v", i, d, w)
		}
	}
}

// A policy refuses an answer from a surface it does not allow: the card
// stays pending and answerable from the window.
func TestAnswerPolicyKeepsTheCard(t *testing.T) {
	b, _, _ := newBroker(t, time.Minute)
	b.SetAnswerPolicy(func(r Request, surface string) error {
		if surface == SurfaceNotification && r.Kind == KindCall && r.Ref == "cred_sensitive" {
			return ErrWindowOnly
		}
		return nil
	})
	r := run(910, 4, 9)
	s := approve(t, b, r)
	done := make(chan error, 1)
	go func() {
		done <- errOf(b.AskCall(context.Background(), r, s.ID, Call{Channel: "http", Method: "POST", Target: "x/y", Credential: "prod", Ref: "cred_sensitive"}))
	}()
	var p []Request
	for len(p) == 0 {
		time.Sleep(time.Millisecond)
		p = b.Pending()
	}
	for _, approve := range []bool{true, false} {
		if err := b.Answer(p[0].ID, approve, SurfaceNotification); !errors.Is(err, ErrWindowOnly) {
			t.Fatalf("notification answer (approve %v): %v", approve, err)
		}
	}
	if len(b.Pending()) != 1 {
		t.Fatal("the refused answer took the card away")
	}
	if err := b.Answer(p[0].ID, true, SurfaceApp); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
