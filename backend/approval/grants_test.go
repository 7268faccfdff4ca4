package approval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// grantRecorder is a recorder that also writes grants.
type grantRecorder struct {
	recorder
	gmu    sync.Mutex
	given  []Grant
	ends   []audit.Reason
	uses   []int
	failGr bool
}

func (r *grantRecorder) GrantGiven(_ context.Context, g Grant) error {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	if r.failGr {
		return errors.New("disk full")
	}
	r.given = append(r.given, g)
	return nil
}

func (r *grantRecorder) GrantEnded(g Grant, reason audit.Reason) {
	r.gmu.Lock()
	r.ends, r.uses = append(r.ends, reason), append(r.uses, g.Uses)
	r.gmu.Unlock()
}

func (r *grantRecorder) ended() ([]audit.Reason, []int) {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	return append([]audit.Reason(nil), r.ends...), append([]int(nil), r.uses...)
}

func grantBroker(t *testing.T) (*Broker, func(uint64), *grantRecorder) {
	var epoch struct {
		sync.Mutex
		v uint64
	}
	epoch.v = 5
	rec := &grantRecorder{}
	b := New(Config{BootID: "boot-1", Timeout: time.Minute, Epoch: func() uint64 { epoch.Lock(); defer epoch.Unlock(); return epoch.v }, Recorder: rec})
	t.Cleanup(b.Close)
	return b, func(v uint64) { epoch.Lock(); epoch.v = v; epoch.Unlock() }, rec
}

// ask raises call c's card (or goes through on a grant) and returns the
// card (nil when none was raised) and the call's answer.
func ask(t *testing.T, b *Broker, s Session, c Call) (*Request, func() (Via, error)) {
	t.Helper()
	tk, err := b.RequestCall(s.Run, s.ID, c)
	if err != nil {
		t.Fatal(err)
	}
	wait := func() (Via, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return tk.Wait(ctx)
	}
	select {
	case <-tk.p.done:
		return nil, wait
	default:
	}
	r := tk.p.req
	return &r, wait
}

var post = Call{Channel: "http", Method: "POST", Target: "api.example.com/repos/a/issues", Credential: "gh", Ref: "cred_1"}

// "Approve calls like this for 10 minutes": the card's call goes, and for
// the grant's time the same run's calls with the same credential, method
// and path prefix go without a card, each naming the grant as its via;
// any other call still asks.
func TestGrantLetsCallsLikeItThrough(t *testing.T) {
	b, _, rec := grantBroker(t)
	a := run(100, 1, 9)
	s := approve(t, b, a)
	card, wait := ask(t, b, s, post)
	if card == nil || card.GrantWords != "POST requests to api.example.com/repos/a/…" {
		t.Fatalf("card %+v", card)
	}
	if err := b.AnswerGrant(card.ID, Via{Surface: SurfaceApp}); err != nil {
		t.Fatal(err)
	}
	if v, err := wait(); err != nil || v.Surface != SurfaceApp {
		t.Fatalf("the card's own call: %+v %v", v, err)
	}
	gs := b.Grants()
	if len(gs) != 1 || gs[0].SessionID != s.ID || gs[0].Until.Sub(gs[0].GivenAt) != GrantDuration || len(rec.given) != 1 {
		t.Fatalf("grants %+v, recorded %+v", gs, rec.given)
	}
	// The decision the window confirms says a grant was given, not "this
	// call, this once".
	if ds := b.Decisions(); len(ds) == 0 || ds[0].RequestID != card.ID || ds[0].Outcome != OutcomeApproved ||
		ds[0].Grant != card.GrantWords || !ds[0].GrantUntil.Equal(gs[0].Until) {
		t.Fatalf("the grant's decision: %+v", ds)
	}
	for i, target := range []string{"api.example.com/repos/a/issues", "api.example.com/repos/a/pulls/7"} {
		c := post
		c.Target = target
		card, wait := ask(t, b, s, c)
		if card != nil {
			t.Fatalf("%s raised a card under the grant", target)
		}
		v, err := wait()
		if err != nil || v.Surface != SurfaceGrant || !strings.Contains(v.Detail, gs[0].ID) || !strings.Contains(v.Detail, "use "+string(rune('1'+i))) {
			t.Fatalf("%s: via %+v, %v", target, v, err)
		}
	}
	// Outside the grant: each of these asks.
	other := run(101, 2, 9)
	so := approve(t, b, other)
	for name, c := range map[string]Call{
		"another method":      {Channel: "http", Method: "PUT", Target: post.Target, Credential: "gh", Ref: "cred_1"},
		"another prefix":      {Channel: "http", Method: "POST", Target: "api.example.com/repos/b/issues", Credential: "gh", Ref: "cred_1"},
		"a climb out":         {Channel: "http", Method: "POST", Target: "api.example.com/repos/a/../b/issues", Credential: "gh", Ref: "cred_1"},
		"an escaped climb":    {Channel: "http", Method: "POST", Target: "api.example.com/repos/a/%2E%2E/b", Credential: "gh", Ref: "cred_1"},
		"another credential":  {Channel: "http", Method: "POST", Target: post.Target, Credential: "gh2", Ref: "cred_2"},
		"another host":        {Channel: "http", Method: "POST", Target: "api.example.com.evil/repos/a/issues", Credential: "gh", Ref: "cred_1"},
		"another run (other)": post,
	} {
		sess := s
		if name == "another run (other)" {
			sess = so
		}
		card, wait := ask(t, b, sess, c)
		if card == nil {
			t.Fatalf("%s went through on the grant", name)
		}
		b.Answer(card.ID, false, "test")
		if _, err := wait(); !errors.Is(err, ErrDenied) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := b.RevokeGrant(gs[0].ID); err != nil {
		t.Fatal(err)
	}
	if ends, uses := rec.ended(); len(ends) != 1 || ends[0] != audit.ReasonRevoked || uses[0] != 2 {
		t.Fatalf("ended %v with uses %v", ends, uses)
	}
	if card, _ := ask(t, b, s, post); card == nil {
		t.Fatal("a revoked grant let a call through")
	}
	if _, ok := b.Valid(a); !ok {
		t.Fatal("revoking the grant ended the session")
	}
}

// A grant never outlives its session: the run's exit, a lock (epoch
// change), a revoked session and Yett stopping end it, each recorded with
// its reason; its time ending does too.
func TestGrantEndsWithItsSession(t *testing.T) {
	for _, tt := range []struct {
		name   string
		end    func(b *Broker, setEpoch func(uint64), s Session, rec *grantRecorder)
		reason audit.Reason
	}{
		{"exit", func(b *Broker, _ func(uint64), s Session, _ *grantRecorder) {
			b.EndRun(s.RunID, audit.ReasonProcessExited)
		}, audit.ReasonProcessExited},
		{"lock", func(b *Broker, set func(uint64), _ Session, _ *grantRecorder) { set(6); b.EpochChanged() }, audit.ReasonVaultStateChanged},
		{"session revoked", func(b *Broker, _ func(uint64), s Session, _ *grantRecorder) { b.Revoke(s.ID) }, audit.ReasonRevoked},
		{"stop", func(b *Broker, _ func(uint64), _ Session, _ *grantRecorder) { b.Close() }, ReasonGatewayStopped},
		{"time", func(b *Broker, _ func(uint64), _ Session, rec *grantRecorder) {
			b.mu.Lock()
			var g *Grant
			for _, x := range b.grants {
				g = x
			}
			b.mu.Unlock()
			g.timer.Reset(time.Millisecond)
			// The timer's goroutine takes the grant off the live ones, then
			// records its end outside the broker's lock: wait for the
			// record, which comes last.
			deadline := time.Now().Add(5 * time.Second)
			for ends, _ := rec.ended(); len(ends) == 0 && time.Now().Before(deadline); ends, _ = rec.ended() {
				time.Sleep(time.Millisecond)
			}
		}, audit.ReasonExpired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, set, rec := grantBroker(t)
			a := run(100, 1, 9)
			s := approve(t, b, a)
			card, wait := ask(t, b, s, post)
			if err := b.AnswerGrant(card.ID, Via{Surface: SurfaceApp}); err != nil {
				t.Fatal(err)
			}
			wait()
			tt.end(b, set, s, rec)
			if len(b.Grants()) != 0 {
				t.Fatal("the grant outlived its session")
			}
			if ends, _ := rec.ended(); len(ends) != 1 || ends[0] != tt.reason {
				t.Fatalf("grant ended with %v, want %s", ends, tt.reason)
			}
		})
	}
}

// Giving a grant fails closed: a grant the audit log refused is not given
// and its card is refused; a session card gives none; a grant is given
// only for a card still pending.
func TestGrantFailsClosed(t *testing.T) {
	b, _, rec := grantBroker(t)
	a := run(100, 1, 9)
	s := approve(t, b, a)
	rec.failGr = true
	card, wait := ask(t, b, s, post)
	if err := b.AnswerGrant(card.ID, Via{Surface: SurfaceApp}); !errors.Is(err, ErrAuditUnavailable) {
		t.Fatalf("grant with a refusing audit log: %v", err)
	}
	if _, err := wait(); err == nil || len(b.Grants()) != 0 {
		t.Fatalf("the call went (%v) or a grant stands (%d)", err, len(b.Grants()))
	}
	rec.failGr = false
	tk, err := b.RequestSession(run(102, 3, 9), Continuity{Change: ChangeFirst}, "http", "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AnswerGrant(tk.ID, Via{Surface: SurfaceApp}); !errors.Is(err, ErrNotGrantable) {
		t.Fatalf("a session card gave a grant: %v", err)
	}
	if err := b.AnswerGrant("rq-none", Via{Surface: SurfaceApp}); !errors.Is(err, ErrNotPending) {
		t.Fatalf("a grant for no card: %v", err)
	}
	if w, _ := GrantScopeOf(Call{Channel: "http", Method: "POST", Target: "hostonly"}); w != "" {
		t.Fatal("a target without a path gave a grant scope")
	}
	if _, words := GrantScopeOf(Call{Channel: "ssh", Method: "exec", Target: "deploy@web1", Command: "git pull"}); words != "exactly this command on deploy@web1" {
		t.Fatalf("ssh words %q", words)
	}
}

// An access card: approving tells the agent it is set up (and gives no
// session); refusing is remembered for the run and the same reason, so the
// same request with the same reason is refused without a card, and a new
// reason asks again; asking twice joins the card.
func TestAccessRequests(t *testing.T) {
	b, _, _ := grantBroker(t)
	a := run(100, 1, 9)
	ask := func(reason string) (CallTicket, error) {
		return b.RequestAccess(a, Access{Kind: "http", Target: "api.github.com", Reason: reason})
	}
	wait := func(tk CallTicket) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := tk.Wait(ctx)
		return err
	}
	tk, err := ask("to open the release pull request")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := ask("to open the release pull request")
	if p := b.Pending(); len(p) != 1 || p[0].Kind != KindAccess || p[0].Reason != "to open the release pull request" ||
		!strings.Contains(p[0].Sentence(), "a credential for api.github.com") {
		t.Fatalf("pending %+v", p)
	}
	if err := b.Answer(tk.p.req.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if wait(tk) != nil || wait(again) != nil {
		t.Fatal("the approved request did not answer both waiters")
	}
	if _, ok := b.Valid(a); ok {
		t.Fatal("an access answer gave a session")
	}
	tk, _ = ask("to read the CI logs")
	b.Answer(tk.p.req.ID, false, "test")
	if err := wait(tk); !errors.Is(err, ErrDenied) {
		t.Fatalf("refused: %v", err)
	}
	if _, err := ask("to read the CI logs"); !errors.Is(err, ErrAlreadyRefused) {
		t.Fatalf("the same reason again: %v", err)
	}
	if len(b.Pending()) != 0 {
		t.Fatal("a refused request raised a card again")
	}
	tk, err = ask("the CI failed and its logs say why")
	if err != nil || len(b.Pending()) != 1 {
		t.Fatalf("a new reason: %v", err)
	}
	b.EndRun(RunID(a), audit.ReasonProcessExited)
	if err := wait(tk); !errors.Is(err, ErrWithdrawn) {
		t.Fatalf("after the run ended: %v", err)
	}
}
