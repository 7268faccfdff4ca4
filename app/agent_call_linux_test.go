package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/vault"
)

// The Connect page's checklist closes the loop on the first run: once a
// real agent's call went through Yett, LastAgentCall names it (method,
// host and path without the query, status, the credential by its name and
// the run a person approved), the answered card's decision names the
// credential too, and nothing of the credential's value is in either.
func TestLastAgentCallNamesTheFirstRealCall(t *testing.T) {
	bin := buildYett(t)
	base, err := os.MkdirTemp("", "yfirst") // short: the socket path must fit in sun_path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dataDir, runDir := filepath.Join(base, "data"), filepath.Join(base, "run")
	addr, got := startCardReceiver(t)

	v, err := vault.Open(dataDir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedBuffer{&logMu, &logs}, nil))
	k, err := keeper.Open(keeper.Config{DataDir: dataDir, RuntimeDir: runDir, Vault: v, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	approvals := &approvalFixture{events: &stateLog{}}
	sink := &eventSink{}
	sink.attach(approvals.events.emit)
	audits := newAuditService(v, k, sink, logger, 5*time.Millisecond)
	approvals.svc = newApprovalService(sink, logger)
	t.Cleanup(func() {
		approvals.svc.attach(nil)
		v.Lock("test_end")
		audits.close()
		k.Close()
		v.Close()
	})

	if c := audits.LastAgentCall(); c.Readable || c.Found {
		t.Fatalf("before the vault exists: %+v", c)
	}
	if err := v.Create(vault.Passphrase("correct horse battery staple"), false); err != nil {
		t.Fatal(err)
	}
	// A root test process cannot be verified by the system: the window's
	// click is the answer, as a person who chose Never has it.
	if err := k.SetVerification(keeper.VerifyNever); err != nil {
		t.Fatal(err)
	}
	if c := audits.LastAgentCall(); !c.Readable || c.Found {
		t.Fatalf("a new vault, no call yet: %+v", c)
	}
	cred, err := v.Credentials().Add(vault.NewCredential{
		Name: "receiver", Secret: vault.NewSecret([]byte(gatewayCanary)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{addr}, Approval: vault.ApprovalSession,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { st := k.State(); return st.SocketPath != "" && st.Broker != nil })
	approvals.svc.attach(k.State().Broker)

	agent := startTestAgent(t, bin, runDir, "http://"+addr+"/first-run/profile?page=2")
	pid := agent.cmd.Process.Pid

	card := approvals.waitState(t, "the agent's card", cardsIs(1)).Cards[0]
	// The session card names the credential the first call would use.
	if card.Kind != "session" || card.Credential != "receiver" || card.Target != addr {
		t.Fatalf("card %+v", card)
	}
	if c := audits.LastAgentCall(); c.Found {
		t.Fatalf("a call waiting for its card is not a completed call: %+v", c)
	}
	if err := approvals.svc.Answer(card.ID, true); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-agent.reply:
		if !strings.Contains(line, `"is_error":false`) {
			t.Fatalf("agent said %q (stderr %s)", line, agent.stderrText())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent's call never returned (stderr %s)", agent.stderrText())
	}
	if got.withCredential.Load() != 1 {
		t.Fatalf("the receiver saw %d calls with the credential", got.withCredential.Load())
	}
	st := approvals.waitState(t, "the decision", func(s ApprovalState) bool { return len(s.Decisions) == 1 })
	if d := st.Decisions[0]; d.Outcome != "approved" || d.Credential != "receiver" || d.Agent.PID != pid || d.Target != addr {
		t.Errorf("decision %+v", d)
	}

	var call AgentCall
	waitFor(t, func() bool { call = audits.LastAgentCall(); return call.Found })
	want := AgentCall{Readable: true, Found: true, Time: call.Time, Channel: "http", Operation: "POST", Target: addr,
		Path: "/first-run/profile", Status: 200, Class: "success", Credential: "receiver",
		Agent: filepath.Base(os.Args[0]), PID: pid}
	if call != want {
		t.Errorf("last call\n got %+v\nwant %+v", call, want)
	}
	if _, err := time.Parse(time.RFC3339, call.Time); err != nil {
		t.Errorf("time %q: %v", call.Time, err)
	}
	views, _ := json.Marshal([]any{call, st})
	for _, leak := range []string{gatewayCanary, "page=2"} {
		if strings.Contains(string(views), leak) {
			t.Errorf("the views hold %q: %s", leak, views)
		}
	}

	// A credential removed since: the call stays, its name goes.
	if err := v.Credentials().Remove(cred.ID); err != nil {
		t.Fatal(err)
	}
	if c := audits.LastAgentCall(); !c.Found || c.Credential != "" || c.Path != "/first-run/profile" {
		t.Errorf("after the credential was removed: %+v", c)
	}
	// Locked, the log is not read at all.
	if err := v.Lock("user"); err != nil {
		t.Fatal(err)
	}
	if c := audits.LastAgentCall(); c != (AgentCall{}) {
		t.Errorf("while locked: %+v", c)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), gatewayCanary) {
		t.Error("the credential reached the log")
	}
}
