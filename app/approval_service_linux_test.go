package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/procid"
)

// approvalCanary stands for a token an agent was started with on its
// command line: procid records the command line, the UI must never show it.
const approvalCanary = "CANARY-approval-5d1c0b7e"

// liveAgent is a real process the test starts: sh (the "agent") with a
// sleep child standing in for the shim, so procid's Origin walks from the
// child up to sh exactly as the gateway walks from `yett mcp` to its agent.
type liveAgent struct {
	cmd *exec.Cmd
	rec *procid.RunRecord
}

func startAgent(t *testing.T) *liveAgent {
	t.Helper()
	return startAgentFrom(t, "sh")
}

// startAgentFrom is startAgent with the agent run from shell, a copy of sh
// under a name the test chooses (an agent names its own program).
func startAgentFrom(t *testing.T, shell string) *liveAgent {
	t.Helper()
	cmd := exec.Command(shell, "-c", `sleep 30 & echo $!; wait`, "agent", "--token="+approvalCanary)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read child pid: %v", err)
	}
	shimPID, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	// The child reports its pid before it has exec'd sleep; until it has,
	// it is still sh and procid rightly refuses the walk.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if exe, _ := os.Readlink("/proc/" + strconv.Itoa(shimPID) + "/exe"); filepath.Base(exe) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never ran sleep")
		}
	}
	rec, err := procid.NewInspector().Origin(shimPID)
	if err != nil {
		t.Fatalf("origin of %d: %v", shimPID, err)
	}
	if rec.PID != cmd.Process.Pid {
		t.Fatalf("origin pid %d, want the sh agent %d", rec.PID, cmd.Process.Pid)
	}
	if !strings.Contains(rec.CmdLine, approvalCanary) {
		t.Fatalf("the canary is not in the recorded command line %q: the redaction test would prove nothing", rec.CmdLine)
	}
	return &liveAgent{cmd: cmd, rec: rec}
}

// kill ends the agent and its child.
func (a *liveAgent) kill() { _ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL) }

// decisions is a Recorder standing in for the gateway's audit log.
type decisions struct {
	mu       sync.Mutex
	approved []approval.Session
	ended    []audit.Reason
	expired  int
}

func (d *decisions) SessionApproved(_ context.Context, s approval.Session) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.approved = append(d.approved, s)
	return nil
}

func (d *decisions) SessionEnded(_ approval.Session, r audit.Reason) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended = append(d.ended, r)
}

func (d *decisions) RequestExpired(approval.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expired++
}

// stateLog keeps every approval:changed payload, as JSON (what crosses to
// the webview) and decoded.
type stateLog struct {
	mu     sync.Mutex
	raw    []string
	states []ApprovalState
}

func (l *stateLog) emit(name string, data any) {
	if name != EventApprovalChanged {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	var st ApprovalState
	if err := json.Unmarshal(b, &st); err != nil {
		panic(err)
	}
	l.mu.Lock()
	l.raw = append(l.raw, string(b))
	l.states = append(l.states, st)
	l.mu.Unlock()
}

func (l *stateLog) last() (ApprovalState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.states) == 0 {
		return ApprovalState{}, false
	}
	return l.states[len(l.states)-1], true
}

func (l *stateLog) allJSON() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.raw, "\n")
}

type approvalFixture struct {
	svc    *ApprovalService
	broker *approval.Broker
	epoch  *atomic.Uint64
	rec    *decisions
	events *stateLog
	logs   *bytes.Buffer
}

func newApprovalFixture(t *testing.T, timeout time.Duration) *approvalFixture {
	t.Helper()
	f := &approvalFixture{epoch: &atomic.Uint64{}, rec: &decisions{}, events: &stateLog{}, logs: &bytes.Buffer{}}
	f.epoch.Store(7)
	f.broker = approval.New(approval.Config{
		BootID: "boot-app-test", Timeout: timeout, Epoch: f.epoch.Load, Recorder: f.rec,
	})
	sink := &eventSink{}
	sink.attach(f.events.emit)
	f.svc = newApprovalService(sink, slog.New(slog.NewTextHandler(f.logs, nil)))
	f.svc.attach(f.broker)
	t.Cleanup(func() {
		f.svc.close()
		f.broker.Close()
		if strings.Contains(f.logs.String(), approvalCanary) {
			t.Error("the canary reached the log")
		}
		if strings.Contains(f.events.allJSON(), approvalCanary) {
			t.Error("the canary reached an approval:changed payload")
		}
	})
	return f
}

// waitState waits until the last pushed state satisfies ok.
func (f *approvalFixture) waitState(t *testing.T, what string, ok func(ApprovalState) bool) ApprovalState {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if st, got := f.events.last(); got && ok(st) {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, _ := f.events.last()
	t.Fatalf("no approval:changed event with %s; last: %+v", what, st)
	return st
}

// askFirstSession has a fresh agent process ask for its first session and
// waits for its card to be pushed to the UI.
func (f *approvalFixture) askFirstSession(t *testing.T) (*liveAgent, approval.Ticket, ApprovalState) {
	t.Helper()
	a := startAgent(t)
	tk, err := f.broker.RequestSession(a.rec, approval.Continuity{Change: approval.ChangeFirst}, "http", "api.example.com")
	if err != nil {
		t.Fatal(err)
	}
	return a, tk, f.waitState(t, "one card", cardsIs(1))
}

func cardsIs(n int) func(ApprovalState) bool {
	return func(s ApprovalState) bool { return len(s.Cards) == n }
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestApprovalServiceWithoutGateway(t *testing.T) {
	events := &stateLog{}
	sink := &eventSink{}
	sink.attach(events.emit)
	s := newApprovalService(sink, slog.New(slog.DiscardHandler))
	if p, l := s.Pending(), s.Sessions(); p == nil || l == nil || len(p)+len(l) != 0 {
		t.Fatalf("want empty, non-nil lists (JSON []), got %v %v", p, l)
	}
	for name, err := range map[string]error{"answer": s.Answer("rq-x", true), "revoke": s.Revoke("ap-x"),
		"grant": s.AnswerGrant("rq-x"), "revoke grant": s.RevokeGrant("gr-x")} {
		if err == nil || err.Error() != errNoGateway.Error() {
			t.Errorf("%s without a gateway: %v", name, err)
		}
	}
	b, _ := json.Marshal(ApprovalState{Cards: s.Pending(), Sessions: s.Sessions(), Decisions: s.Decisions(), Grants: s.Grants()})
	if string(b) != `{"cards":[],"sessions":[],"decisions":[],"grants":[]}` {
		t.Errorf("empty state encodes as %s", b)
	}

	// Attaching and detaching a broker each push the state at once, so the
	// UI drops the cards of a gateway that stopped.
	b2 := approval.New(approval.Config{BootID: "b", Epoch: func() uint64 { return 1 }})
	s.attach(b2)
	s.attach(nil)
	if n := len(events.raw); n != 2 {
		t.Errorf("attach and detach pushed %d states, want 2", n)
	}
}

func TestApprovalCardApproveRevoke(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	a := startAgent(t)

	tk, err := f.broker.RequestSession(a.rec, approval.Continuity{Change: approval.ChangeAgentRestarted}, "http", "api.example.com")
	if err != nil {
		t.Fatal(err)
	}
	st := f.waitState(t, "one card", cardsIs(1))
	if got := f.svc.Pending(); len(got) != 1 || got[0].ID != st.Cards[0].ID {
		t.Fatalf("Pending() %+v disagrees with the event %+v", got, st.Cards)
	}
	c := st.Cards[0]
	want := "An earlier run of this program ended. Approve this newly started process to use api.example.com during this run."
	checks := []struct {
		name      string
		got, want any
	}{
		{"id", c.ID, tk.ID},
		{"kind", c.Kind, "session"},
		{"change", c.Change, "agent restarted"},
		{"headline", c.Headline, "The agent restarted"},
		{"sentence", c.Sentence, want},
		{"channel", c.Channel, "http"},
		{"target", c.Target, "api.example.com"},
		{"executable", c.Agent.Executable, filepath.Base(a.rec.ExePath)},
		{"path", c.Agent.Path, a.rec.ExePath},
		{"signer", c.Agent.Signer, "unsigned"},
		{"signed", c.Agent.Signed, false},
		{"pid", c.Agent.PID, a.cmd.Process.Pid},
		{"parent", c.Agent.Parents[0], ParentView{PID: os.Getpid(), Name: a.rec.Parents[0].Name}},
		{"hash", c.Agent.ExeHash, "sha256:" + fileHash(t, a.rec.ExePath)[:shortHashLen]},
		{"via", c.Agent.Via, a.rec.ShimExePath},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	if c.SecondsLeft < 25 || c.SecondsLeft > 30 {
		t.Errorf("seconds left %d, want just under the 30 s timeout", c.SecondsLeft)
	}
	if dl, err := time.Parse(time.RFC3339, c.Deadline); err != nil || time.Until(dl) > 31*time.Second {
		t.Errorf("deadline %q: %v", c.Deadline, err)
	}

	if err := f.svc.Answer(c.ID, true); err != nil {
		t.Fatalf("approve: %v", err)
	}
	sess, err := tk.Wait(context.Background())
	if err != nil {
		t.Fatalf("the waiting call was not approved: %v", err)
	}
	st = f.waitState(t, "the session and no card", func(s ApprovalState) bool { return len(s.Cards) == 0 && len(s.Sessions) == 1 })
	ls := st.Sessions[0]
	if ls.ID != sess.ID || ls.Surface != SurfaceDesktopCard || ls.Agent.PID != a.cmd.Process.Pid || ls.VaultEpoch != 7 || ls.Channel != "http" {
		t.Errorf("live session %+v, broker session %s", ls, sess.ID)
	}
	if _, ok := f.broker.Valid(a.rec); !ok {
		t.Error("the broker holds no valid session for the approved run")
	}
	f.rec.mu.Lock()
	if len(f.rec.approved) != 1 || f.rec.approved[0].Surface != SurfaceDesktopCard {
		t.Errorf("recorded approvals %+v", f.rec.approved)
	}
	f.rec.mu.Unlock()
	if err := f.svc.Answer(c.ID, true); err == nil || !strings.Contains(err.Error(), "no longer waiting") {
		t.Errorf("answering twice: %v", err)
	}

	if err := f.svc.Revoke(ls.ID); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	f.waitState(t, "no session", func(s ApprovalState) bool { return len(s.Sessions) == 0 })
	if _, ok := f.broker.Valid(a.rec); ok {
		t.Error("a revoked session is still valid")
	}
	f.rec.mu.Lock()
	if len(f.rec.ended) != 1 || f.rec.ended[0] != audit.ReasonRevoked {
		t.Errorf("recorded ends %v, want [revoked]", f.rec.ended)
	}
	f.rec.mu.Unlock()
	if err := f.svc.Revoke(ls.ID); err == nil || err.Error() != "This session has already ended." {
		t.Errorf("revoking twice: %v", err)
	}
}

func TestApprovalCardDenied(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	_, tk, st := f.askFirstSession(t)
	if err := f.svc.Answer(st.Cards[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Wait(context.Background()); !errors.Is(err, approval.ErrDenied) {
		t.Fatalf("waiting call got %v, want ErrDenied", err)
	}
	f.waitState(t, "no card", cardsIs(0))
	if n := len(f.svc.Sessions()); n != 0 {
		t.Errorf("a denied card left %d sessions", n)
	}
}

// The gateway ends a run when procid.WatchExit fires; this test does the
// same with the real watcher on the real process.
func TestKilledAgentCardDisappears(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	a, tk, st := f.askFirstSession(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exited := procid.WatchExit(ctx, a.rec)
	go func() {
		<-exited
		if ctx.Err() == nil {
			f.broker.EndRun(approval.RunID(a.rec), audit.ReasonProcessExited)
		}
	}()
	a.kill()

	f.waitState(t, "the card withdrawn", cardsIs(0))
	if _, err := tk.Wait(context.Background()); !errors.Is(err, approval.ErrWithdrawn) {
		t.Errorf("waiting call got %v, want ErrWithdrawn", err)
	}
	if err := f.svc.Answer(st.Cards[0].ID, true); err == nil || !strings.Contains(err.Error(), "no longer waiting") {
		t.Errorf("approving a withdrawn card: %v", err)
	}
	if n := len(f.svc.Sessions()); n != 0 {
		t.Errorf("%d sessions after the agent died", n)
	}
}

func TestApprovalCardWithdrawnWhenVaultEpochMoves(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	_, tk, _ := f.askFirstSession(t)
	f.epoch.Add(1) // the vault locked
	f.broker.EpochChanged()
	f.waitState(t, "the card withdrawn", cardsIs(0))
	if _, err := tk.Wait(context.Background()); !errors.Is(err, approval.ErrWithdrawn) {
		t.Errorf("waiting call got %v, want ErrWithdrawn", err)
	}
}

// An approval given after the vault changed, before the gateway told the
// broker, is refused with words saying nothing was approved.
func TestApprovalAfterEpochMovedIsRefused(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	_, tk, st := f.askFirstSession(t)
	f.epoch.Add(1)
	err := f.svc.Answer(st.Cards[0].ID, true)
	if err == nil || !strings.Contains(err.Error(), "Nothing was approved") {
		t.Fatalf("approve after the epoch moved: %v", err)
	}
	if _, err := tk.Wait(context.Background()); !errors.Is(err, approval.ErrWithdrawn) {
		t.Errorf("waiting call got %v, want ErrWithdrawn", err)
	}
	if n := len(f.svc.Sessions()); n != 0 {
		t.Errorf("%d sessions after a refused approval", n)
	}
}

// When the gateway restarts the app attaches the new broker: the old one's
// cards leave the UI and its later updates no longer reach it.
func TestAttachFollowsTheCurrentGateway(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	a, _, _ := f.askFirstSession(t)
	next := approval.New(approval.Config{BootID: "boot-2", Timeout: 30 * time.Second, Epoch: f.epoch.Load})
	defer next.Close()
	f.svc.attach(next)
	f.waitState(t, "the new gateway's empty state", cardsIs(0))
	f.events.mu.Lock()
	before := len(f.events.raw)
	f.events.mu.Unlock()
	f.broker.EndRun(approval.RunID(a.rec), audit.ReasonProcessExited) // an update of the old broker
	f.events.mu.Lock()
	after := len(f.events.raw)
	f.events.mu.Unlock()
	if after != before {
		t.Errorf("the detached broker still pushed %d states", after-before)
	}
}

func TestApprovalCardTimesOut(t *testing.T) {
	f := newApprovalFixture(t, 300*time.Millisecond)
	_, tk, _ := f.askFirstSession(t)
	if _, err := tk.Wait(context.Background()); !errors.Is(err, approval.ErrTimeout) {
		t.Fatalf("waiting call got %v, want ErrTimeout", err)
	}
	f.waitState(t, "the expired card gone", cardsIs(0))
}

func TestPerCallCard(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	a, tk, _ := f.askFirstSession(t)
	if err := f.svc.Answer(tk.ID, true); err != nil {
		t.Fatal(err)
	}
	sess, err := tk.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	answered := make(chan error, 1)
	go func() {
		answered <- callErr(f.broker.AskCall(context.Background(), a.rec, sess.ID, approval.Call{Channel: "http", Method: "DELETE", Target: "api.example.com/v1/repos/x", Credential: "deploy-key"}))
	}()
	st := f.waitState(t, "a call card", cardsIs(1))
	c := st.Cards[0]
	if c.Kind != "call" || c.Method != "DELETE" || c.Target != "api.example.com" || c.Path != "/v1/repos/x" || c.Credential != "deploy-key" {
		t.Errorf("call card %+v", c)
	}
	wantSentence := "sh wants to send DELETE /v1/repos/x to api.example.com with the credential “deploy-key”, which needs your approval for every call."
	if filepath.Base(a.rec.ExePath) != "sh" {
		wantSentence = strings.Replace(wantSentence, "sh", filepath.Base(a.rec.ExePath), 1)
	}
	if c.Sentence != wantSentence {
		t.Errorf("call sentence %q", c.Sentence)
	}
	if err := f.svc.Answer(c.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := <-answered; !errors.Is(err, approval.ErrDenied) {
		t.Errorf("the call got %v, want ErrDenied", err)
	}
	// Denying one call does not end the session: the two are separate.
	if n := len(f.svc.Sessions()); n != 1 {
		t.Errorf("%d sessions after a denied call, want 1", n)
	}
}

// callErr is AskCall's error alone, for tests that wait on it.
func callErr(_ approval.Via, err error) error { return err }

// Session cards of runs of one program waiting together are answered in
// one action, each its own approval of its own run and each recorded; a
// set that mixes another target (or a call card) is refused whole.
func TestAnswerRunsOfOneProgram(t *testing.T) {
	f := newApprovalFixture(t, 30*time.Second)
	var runs []*liveAgent
	var tickets []approval.Ticket
	for range 3 {
		a := startAgent(t)
		tk, err := f.broker.RequestSession(a.rec, approval.Continuity{Change: approval.ChangeFirst}, "http", "api.example.com")
		if err != nil {
			t.Fatal(err)
		}
		runs, tickets = append(runs, a), append(tickets, tk)
	}
	other := startAgent(t)
	otk, err := f.broker.RequestSession(other.rec, approval.Continuity{Change: approval.ChangeFirst}, "http", "other.example.com")
	if err != nil {
		t.Fatal(err)
	}
	st := f.waitState(t, "four cards", cardsIs(4))
	group := map[string][]string{}
	for _, c := range st.Cards {
		if c.Program == "" {
			t.Fatalf("a session card without a program: %+v", c)
		}
		group[c.Program] = append(group[c.Program], c.ID)
	}
	var three []string
	for _, ids := range group {
		if len(ids) == 3 {
			three = ids
		}
	}
	if len(group) != 2 || three == nil {
		t.Fatalf("groups %v", group)
	}
	mixed := append(append([]string(nil), three...), otk.ID)
	if res, err := f.svc.AnswerRuns(mixed, true); err == nil || !strings.Contains(err.Error(), "one by one") || len(res.Answered) != 0 {
		t.Fatalf("a mixed set: %+v %v", res, err)
	}
	if n := len(f.svc.Pending()); n != 4 {
		t.Fatalf("a refused set answered cards: %d left", n)
	}
	res, err := f.svc.AnswerRuns(three, true)
	if err != nil || len(res.Answered) != 3 || len(res.Failed) != 0 {
		t.Fatalf("answer runs: %+v %v", res, err)
	}
	seen := map[string]bool{}
	for i, tk := range tickets {
		s, err := tk.Wait(context.Background())
		if err != nil || s.Run.PID != runs[i].rec.PID || seen[s.ID] {
			t.Fatalf("run %d: session %+v, %v", i, s, err)
		}
		seen[s.ID] = true
		if !strings.Contains(s.Via.Detail, "one action in the window for 3 runs") {
			t.Fatalf("via %+v", s.Via)
		}
	}
	if n := len(f.svc.Sessions()); n != 3 {
		t.Fatalf("%d sessions, want one per run", n)
	}
	// Answering again: each card is gone; Deny on the rest works alike.
	if res, err := f.svc.AnswerRuns(three, true); err == nil || len(res.Answered) != 0 {
		t.Fatalf("answered cards answered again: %+v %v", res, err)
	}
	if res, err := f.svc.AnswerRuns([]string{otk.ID}, false); err != nil || len(res.Answered) != 1 {
		t.Fatalf("deny one: %+v %v", res, err)
	}
	if _, err := otk.Wait(context.Background()); !errors.Is(err, approval.ErrDenied) {
		t.Fatalf("denied run: %v", err)
	}
}
