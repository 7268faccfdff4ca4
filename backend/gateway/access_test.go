//go:build unix

package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// TestRequestAccess: an agent asks for a credential Yett does not hold; the
// person sees a card naming the host and the agent's reason; GRANTED once
// the person adds it and says so (no session comes with it: the next call
// asks as any call does), REFUSED when refused, and the same request with
// the same reason is refused again without a card. Something Yett holds is
// ALREADY_AVAILABLE without a card. Each request and answer is in the
// audit log; the agent never sends or sees a secret.
func TestRequestAccess(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	ask := func(target, reason string) map[string]any {
		return map[string]any{"kind": "http", "target": target, "reason": reason}
	}
	// Yett holds the receiver's credential already.
	r := a.call(agentapi.ToolRequestAccess, ask("http://"+w.recv.addr+"/x", "to post the report"))
	if r.IsError || !strings.HasPrefix(r.Text, agentapi.CodeAlreadyAvailable) || len(w.gw.Broker().Pending()) != 0 {
		t.Fatalf("held already: %+v", r)
	}
	wait := a.callAsync(agentapi.ToolRequestAccess, ask("https://api.github.com/repos/x", "to open the release\npull request"))
	card := w.pending(approval.KindAccess)
	if card.Target != "api.github.com" || card.Reason != "to open the release pull request" || card.Channel != "http" {
		t.Fatalf("card %+v", card)
	}
	// The person adds the credential, then says it is set up.
	if _, err := w.vault.Credentials().Add(vault.NewCredential{Name: "github", Secret: vault.NewSecret([]byte(canary + "-gh")),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{"api.github.com"}, Approval: vault.ApprovalSession}); err != nil {
		t.Fatal(err)
	}
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r = wait()
	var st struct{ Outcome, Kind, Target string }
	if r.IsError || !strings.HasPrefix(r.Text, agentapi.CodeGranted) || json.Unmarshal(r.Structured, &st) != nil ||
		st.Outcome != agentapi.CodeGranted || st.Target != "api.github.com" {
		t.Fatalf("granted: %+v", r)
	}
	if len(w.gw.Broker().Sessions()) != 0 {
		t.Fatal("an access answer gave the run a session")
	}
	deploy := map[string]any{"kind": "ssh", "target": "deploy-box", "reason": "to read the deploy logs"}
	wait = a.callAsync(agentapi.ToolRequestAccess, deploy)
	card = w.pending(approval.KindAccess)
	w.gw.Broker().Answer(card.ID, false, "test")
	if r = wait(); !r.IsError || !strings.HasPrefix(r.Text, agentapi.CodeRefused+" "+agentapi.DetailPersonRefused) {
		t.Fatalf("refused: %+v", r)
	}
	// The same request with the same reason: refused at once, no card.
	if r = a.call(agentapi.ToolRequestAccess, deploy); !strings.HasPrefix(r.Text, agentapi.CodeRefused+" "+agentapi.DetailAlreadyRefused) ||
		len(w.gw.Broker().Pending()) != 0 {
		t.Fatalf("the same request again: %+v", r)
	}
	if r := a.call(agentapi.ToolRequestAccess, map[string]any{"kind": "disk", "target": "x", "reason": "y"}); !strings.HasPrefix(r.Text, agentapi.CodeInvalid) {
		t.Fatalf("a bad kind: %+v", r)
	}
	var requested, answered int
	for _, e := range auditEvents(t, w) {
		switch e.Type {
		case audit.EventAccessRequested:
			requested++
		case audit.EventAccessAnswered:
			answered++
			if e.Access == nil || e.Success == nil {
				t.Fatalf("access_answered %+v", e)
			}
		}
	}
	if requested != 2 || answered != 2 {
		t.Fatalf("%d requests and %d answers recorded, want 2 and 2", requested, answered)
	}
	w.checkNoLeak()
}
