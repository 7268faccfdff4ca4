package approval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/procid"
)

func run(pid int, nonce byte, exe byte) *procid.RunRecord {
	r := &procid.RunRecord{PID: pid, StartKey: uint64(pid) * 10, ExePath: "/bin/agent", Name: "agent", Signer: procid.SignerUnsigned}
	r.ExeSHA256[0] = exe
	r.LaunchNonce[0] = nonce
	return r
}

type recorder struct {
	mu       sync.Mutex
	approved []Session
	ended    []audit.Reason
	expired  int
	fail     bool
}

func (r *recorder) SessionApproved(_ context.Context, s Session) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("disk full")
	}
	r.approved = append(r.approved, s)
	return nil
}
func (r *recorder) SessionEnded(_ Session, reason audit.Reason) {
	r.mu.Lock()
	r.ended = append(r.ended, reason)
	r.mu.Unlock()
}
func (r *recorder) RequestExpired(Request) { r.mu.Lock(); r.expired++; r.mu.Unlock() }

func newBroker(t *testing.T, timeout time.Duration) (*Broker, *atomic.Uint64, *recorder) {
	var epoch atomic.Uint64
	epoch.Store(5)
	rec := &recorder{}
	b := New(Config{BootID: "boot-1", Timeout: timeout, Epoch: epoch.Load, Recorder: rec})
	t.Cleanup(b.Close)
	return b, &epoch, rec
}

// approve raises a card for r and approves it.
func approve(t *testing.T, b *Broker, r *procid.RunRecord) Session {
	t.Helper()
	tk, err := b.RequestSession(r, Continuity{Change: ChangeFirst}, "http", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Answer(tk.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	s, ok := b.Valid(r)
	if !ok {
		t.Fatal("approved session not valid")
	}
	return s
}

func TestSessionBinding(t *testing.T) {
	b, epoch, rec := newBroker(t, time.Minute)
	a := run(100, 1, 9)
	approve(t, b, a)

	twin := run(100, 2, 9) // same process facts, another inspection
	if _, ok := b.Valid(twin); ok {
		t.Fatal("a run with another launch nonce shares the session")
	}
	other := run(101, 3, 9)
	if _, ok := b.Valid(other); ok {
		t.Fatal("an identical process shares the session")
	}
	if _, ok := b.Valid(a); !ok {
		t.Fatal("session lost")
	}
	epoch.Add(1)
	b.EpochChanged()
	if _, ok := b.Valid(a); ok {
		t.Fatal("session survived an epoch change")
	}
	if c, _ := b.ChangeFor(a); c.Change != ChangeVaultLocked {
		t.Fatalf("change %q", c)
	}
	if len(rec.ended) != 1 || rec.ended[0] != audit.ReasonVaultStateChanged {
		t.Fatalf("ended %v", rec.ended)
	}
}

func TestWithdrawnWhileWaiting(t *testing.T) {
	tests := []struct {
		name  string
		event func(b *Broker, e *atomic.Uint64, r *procid.RunRecord)
	}{
		{"process exit", func(b *Broker, _ *atomic.Uint64, r *procid.RunRecord) { b.EndRun(RunID(r), audit.ReasonProcessExited) }},
		{"epoch change", func(b *Broker, e *atomic.Uint64, _ *procid.RunRecord) { e.Add(1); b.EpochChanged() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, epoch, _ := newBroker(t, time.Minute)
			r := run(200, 3, 9)
			tk, _ := b.RequestSession(r, Continuity{Change: ChangeFirst}, "http", "x")
			id := tk.ID
			errc := make(chan error, 1)
			go func() { _, err := tk.Wait(context.Background()); errc <- err }()
			tt.event(b, epoch, r)
			if err := <-errc; !errors.Is(err, ErrWithdrawn) {
				t.Fatalf("wait: %v", err)
			}
			if len(b.Pending()) != 0 {
				t.Fatal("card still shown")
			}
			if err := b.Answer(id, true, "test"); !errors.Is(err, ErrNotPending) {
				t.Fatalf("late answer: %v", err)
			}
			if _, ok := b.Valid(r); ok {
				t.Fatal("session after withdrawal")
			}
		})
	}
}

func TestTimeoutAndDeny(t *testing.T) {
	b, _, rec := newBroker(t, 50*time.Millisecond)
	r := run(300, 4, 9)
	tk, _ := b.RequestSession(r, Continuity{Change: ChangeFirst}, "http", "x")
	if _, err := tk.Wait(context.Background()); !errors.Is(err, ErrTimeout) {
		t.Fatalf("%v", err)
	}
	// The waiter is woken first; the expiry is recorded right after, outside
	// the broker's lock.
	deadline := time.Now().Add(5 * time.Second)
	expired := 0
	for time.Now().Before(deadline) {
		rec.mu.Lock()
		expired = rec.expired
		rec.mu.Unlock()
		if expired != 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if expired != 1 || len(b.Pending()) != 0 {
		t.Fatal("expiry not recorded or card kept")
	}
	tk, _ = b.RequestSession(r, Continuity{Change: ChangeFirst}, "http", "x")
	go b.Answer(tk.ID, false, "test")
	if _, err := tk.Wait(context.Background()); !errors.Is(err, ErrDenied) {
		t.Fatalf("%v", err)
	}
}

func TestAuditFailureRefusesApproval(t *testing.T) {
	b, _, rec := newBroker(t, time.Minute)
	rec.fail = true
	r := run(400, 5, 9)
	tk, _ := b.RequestSession(r, Continuity{Change: ChangeFirst}, "http", "x")
	if err := b.Answer(tk.ID, true, "test"); !errors.Is(err, ErrAuditUnavailable) {
		t.Fatalf("%v", err)
	}
	if _, ok := b.Valid(r); ok {
		t.Fatal("unrecorded approval took effect")
	}
}

func TestPerCallIsSeparate(t *testing.T) {
	b, _, _ := newBroker(t, time.Minute)
	r := run(500, 6, 9)
	s := approve(t, b, r)
	done := make(chan error, 1)
	go func() {
		done <- errOf(b.AskCall(context.Background(), r, s.ID, Call{Channel: "http", Method: "POST", Target: "x/y", Credential: "cred", Ref: "cred_1"}))
	}()
	var p []Request
	for len(p) == 0 {
		time.Sleep(time.Millisecond)
		p = b.Pending()
	}
	if p[0].Kind != KindCall || p[0].SessionID != s.ID {
		t.Fatalf("%+v", p[0])
	}
	b.Answer(p[0].ID, true, "test")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		done <- errOf(b.AskCall(ctx, r, s.ID, Call{Channel: "http", Method: "POST", Target: "x/y", Credential: "cred", Ref: "cred_1"}))
	}()
	for len(b.Pending()) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if len(b.Pending()) != 0 {
		t.Fatal("a call card outlived its call")
	}
}

func TestChangeFor(t *testing.T) {
	b, _, _ := newBroker(t, time.Minute)
	first := run(600, 7, 9)
	if _, ok := b.ChangeFor(first); ok {
		t.Fatal("knows an unknown process")
	}
	approve(t, b, first)
	b.EndRun(RunID(first), audit.ReasonProcessExited)
	if c, _ := b.ChangeFor(run(601, 8, 9)); c.Change != ChangeAgentRestarted {
		t.Fatalf("%q", c)
	}
	if c, _ := b.ChangeFor(run(600, 9, 9)); c.Change != ChangeReconnected {
		t.Fatalf("%q", c)
	}
	if c, _ := b.ChangeFor(run(600, 9, 8)); c.Change != ChangeIdentityChanged {
		t.Fatalf("%q", c)
	}
	s := approve(t, b, run(602, 10, 7))
	b.Revoke(s.ID)
	if c, _ := b.ChangeFor(run(602, 11, 7)); c.Change != ChangeRevoked {
		t.Fatalf("%q", c)
	}
}

// TestChangeForOtherRuns: a new process of an approved program is a first
// request of its own (its card says what Yett knows of the other runs),
// never a loss of authority it held; only this very process's own ended
// authority reads as one.
func TestChangeForOtherRuns(t *testing.T) {
	b, epoch, _ := newBroker(t, time.Minute)
	live := run(700, 1, 3)
	approve(t, b, live)
	c, ok := b.ChangeFor(run(701, 2, 3))
	if !ok || c.Change != ChangeAnotherRun || c.OwnAuthorityEnded() || !strings.Contains(c.Detail, "pid 700") || !strings.Contains(c.Detail, "is live") {
		t.Fatalf("concurrent run: %+v", c)
	}
	b.EndRun(RunID(live), audit.ReasonProcessExited)
	c, _ = b.ChangeFor(run(702, 3, 3))
	if c.Change != ChangeAgentRestarted || c.OwnAuthorityEnded() || !strings.Contains(c.Detail, "ended at") || !strings.Contains(c.Detail, "it exited") {
		t.Fatalf("restarted run: %+v", c)
	}
	second := run(703, 4, 3)
	approve(t, b, second)
	c, _ = b.ChangeFor(run(704, 5, 3))
	if c.Change != ChangeAnotherRun || !strings.Contains(c.Detail, "(pid 700) ended at") || !strings.Contains(c.Detail, "(pid 703, approved at") {
		t.Fatalf("ended and live: %+v", c)
	}
	epoch.Add(1)
	b.EpochChanged()
	c, _ = b.ChangeFor(second)
	if c.Change != ChangeVaultLocked || !c.OwnAuthorityEnded() {
		t.Fatalf("own authority: %+v", c)
	}
}

// TestCallCardAnsweredAfterEpochMoved: approving a per-call card shown in
// an earlier vault epoch is refused, even before the gateway has told the
// broker about the change.
func TestCallCardAnsweredAfterEpochMoved(t *testing.T) {
	b, epoch, _ := newBroker(t, time.Minute)
	r := run(800, 7, 9)
	s := approve(t, b, r)
	done := make(chan error, 1)
	go func() {
		done <- errOf(b.AskCall(context.Background(), r, s.ID, Call{Channel: "http", Method: "POST", Target: "x/y", Credential: "cred", Ref: "cred_1"}))
	}()
	var p []Request
	for len(p) == 0 {
		time.Sleep(time.Millisecond)
		p = b.Pending()
	}
	epoch.Add(1) // locked and unlocked; EpochChanged not yet delivered
	if err := b.Answer(p[0].ID, true, "test"); !errors.Is(err, ErrWithdrawn) {
		t.Fatalf("answer: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrWithdrawn) {
		t.Fatalf("call: %v", err)
	}
}

// errOf is AskCall's error alone, for tests that wait on it.
func errOf(_ Via, err error) error { return err }

// A per-call card named by a Join outlives the call that gave up on it and
// is joined by the retry; an answer given while nobody waited is taken by
// one retry, once; a denial is kept the same way. It is never kept past a
// vault epoch, a new session, the run's end or its own expiry.
func TestJoinablePerCallCards(t *testing.T) {
	b, epoch, _ := newBroker(t, time.Minute)
	r := run(700, 8, 9)
	s := approve(t, b, r)
	call := Call{Channel: "http", Method: "POST", Target: "x/y", Credential: "cred", Ref: "cred_1", Join: "key-1:abc"}
	ask := func(ctx context.Context, c Call) chan error {
		done := make(chan error, 1)
		go func() { done <- errOf(b.AskCall(ctx, r, s.ID, c)) }()
		return done
	}
	pendingOne := func(stopped bool) Request {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if p := b.Pending(); len(p) == 1 && p[0].AgentStoppedWaiting == stopped {
				return p[0]
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("no single card (stopped waiting %v): %+v", stopped, b.Pending())
		return Request{}
	}
	abandon := func(c Call) Request {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		done := ask(ctx, c)
		pendingOne(false)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the abandoned call: %v", err)
		}
		return pendingOne(true)
	}

	// Joined while pending.
	card := abandon(call)
	retry := ask(context.Background(), call)
	if again := pendingOne(false); again.ID != card.ID {
		t.Fatalf("a second card %s beside %s", again.ID, card.ID)
	}
	b.Answer(card.ID, true, "test")
	if err := <-retry; err != nil {
		t.Fatal(err)
	}
	// Answered while nobody waited: one retry takes it, the next asks.
	card = abandon(call)
	b.Answer(card.ID, true, "test")
	if err := <-ask(context.Background(), call); err != nil {
		t.Fatalf("the retry of a call approved meanwhile: %v", err)
	}
	next := ask(context.Background(), call)
	b.Answer(pendingOne(false).ID, false, "test")
	if err := <-next; !errors.Is(err, ErrDenied) {
		t.Fatalf("an answer was used twice: %v", err)
	}
	// A denial given meanwhile reaches the retry.
	card = abandon(call)
	b.Answer(card.ID, false, "test")
	if err := <-ask(context.Background(), call); !errors.Is(err, ErrDenied) {
		t.Fatalf("the retry of a call denied meanwhile: %v", err)
	}
	// Another Join is another call.
	card = abandon(call)
	otherDone := ask(context.Background(), Call{Channel: "http", Method: "POST", Target: "x/y", Join: "key-1:def"})
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Pending()) != 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if len(b.Pending()) != 2 {
		t.Fatalf("another request under the key joined the card: %+v", b.Pending())
	}
	for _, p := range b.Pending() {
		b.Answer(p.ID, false, "test")
	}
	<-otherDone
	<-ask(context.Background(), call) // takes the kept denial

	// An answer kept for a retry ends with the vault epoch...
	card = abandon(call)
	b.Answer(card.ID, true, "test")
	epoch.Add(1)
	b.EpochChanged()
	s = approve(t, b, r)
	fresh := ask(context.Background(), call)
	if p := pendingOne(false); p.ID == card.ID {
		t.Fatal("an answer of an earlier epoch was kept")
	}
	b.Answer(pendingOne(false).ID, false, "test")
	<-fresh
	// ...and with the run.
	card = abandon(call)
	b.Answer(card.ID, true, "test")
	b.EndRun(RunID(r), audit.ReasonProcessExited)
	b.mu.Lock()
	kept := len(b.joinable)
	b.mu.Unlock()
	if kept != 0 {
		t.Fatalf("%d answers kept after the run ended", kept)
	}
}

// A card whose caller gave up expires like any other, and its expiry is
// not an answer a retry takes.
func TestJoinableCardExpires(t *testing.T) {
	b, _, _ := newBroker(t, 150*time.Millisecond)
	r := run(710, 9, 9)
	s := approve(t, b, r)
	call := Call{Channel: "http", Method: "GET", Target: "x/y", Join: "key-2:abc"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.AskCall(ctx, r, s.ID, call); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if p := b.Pending(); len(p) != 0 {
		t.Fatalf("not expired: %+v", p)
	}
	done := make(chan error, 1)
	go func() { done <- errOf(b.AskCall(context.Background(), r, s.ID, call)) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Pending()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the retry after an expiry took it as an answer: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the retry after an expiry raised no card")
		}
		time.Sleep(time.Millisecond)
	}
	b.Answer(b.Pending()[0].ID, true, "test")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
