//go:build unix

package inventory_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
)

// Drills of the account a remote MCP server gets its tokens from (a Go SDK
// server behind real Hydra, connected by discovery and dynamic
// registration), with another MCP server (server-everything from npm)
// running beside it. The account's row names the server's tools as what
// uses it. The unattended drill proves, through the gateway, that agents
// no longer see the server's tools and a call of one is refused for the
// account (AUTH_SUSPENDED) with nothing sent, then that the tools are back
// and a call goes as far as an agent's would, and names the agent that
// used the account through the server's tool; the full drill ends with
// the call refused as revoked (AUTH_REVOKED) and stays so, the other
// server's tools counted as another credential's, not as a leak.
func TestDrillsOfAnMCPServersAccount(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{DynamicRegistration: true})
	tr := mcpservertest.StartTracker(t, h.Issuer, h.AdminURL+"/admin/oauth2/introspect")
	d := newDesk(t, deskOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := upstream.ConnectOAuth(ctx, d.oauth(), action.New(action.Config{}).GuardedDial, nil, upstream.OAuthRequest{
		Server: "tracker", URL: tr.URL + "/mcp", Environment: "development", Owner: "alice", BackupRevoker: "bob",
	})
	if err != nil {
		t.Fatal(err)
	}
	if status, _, err := h.Browse(ctx, f.Flow.AuthorizationURL); err != nil || status != 200 {
		t.Fatalf("the consent: %d %v", status, err)
	}
	done, err := d.oauth().WaitFlow(ctx, f.Flow.ID)
	if err != nil || done.State != oauth.FlowConnected {
		t.Fatalf("the flow: %+v %v", done, err)
	}
	id := done.AuthorizationID
	// Hydra's public metadata has no introspection endpoint (it is on the
	// admin port): the owner adds it, as the README says.
	if err := d.oauth().SetEndpoints(ctx, id, h.PublicURL+"/oauth2/revoke", h.AdminURL+"/admin/oauth2/introspect"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.v.MCPServers().Add(vault.NewMCPServer{Name: "tracker", Transport: vault.TransportHTTP, URL: tr.URL + "/mcp", OAuth: id,
		MCPServerSettings: vault.MCPServerSettings{Owner: "alice", BackupRevoker: "bob"}}); err != nil {
		t.Fatal(err)
	}
	node, args := mcpservertest.Everything(t)
	if _, err := d.v.MCPServers().Add(vault.NewMCPServer{Name: "everything", Transport: vault.TransportStdio, Command: node, Args: args,
		MCPServerSettings: vault.MCPServerSettings{Owner: "alice", BackupRevoker: "bob"}}); err != nil {
		t.Fatal(err)
	}
	listed := func(names ...string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var have []string
			for _, tl := range d.k.Upstreams().Tools() {
				have = append(have, tl.Name)
			}
			missing := false
			for _, n := range names {
				missing = missing || !slices.Contains(have, n)
			}
			if !missing {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("never listed %v (have %v)", names, have)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	listed("tracker.whoami", "everything.echo")
	if row := d.row(id); !slices.Contains(row.Operations, "tracker.* (MCP server)") {
		t.Fatalf("the account's row does not name the server's tools: %+v", row.Operations)
	}

	// An agent uses the account through the server's tool.
	a := d.agent()
	a.send("tracker.whoami", map[string]any{})
	d.approveNext()
	if r := a.reply(); r.IsError || !strings.Contains(r.Text, "Bearer [REDACTED]") {
		t.Fatalf("an agent's call of the server's tool: %+v", r)
	}

	rep, err := d.inv().RunDrill(ctx, id, inventory.DrillUnattended, inventory.TriggerPerson)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, rep)
	if !rep.Passed || rep.EndState != "active" {
		t.Fatalf("unattended drill: passed=%v end=%s advice=%s", rep.Passed, rep.EndState, rep.Advice)
	}
	refused := strings.Join(stepOf(t, rep, inventory.StepCallRefused).Evidence, "\n")
	if !strings.Contains(refused, "tools/list holds none of tracker's tools") || !strings.Contains(refused, agentapi.CodeAuthSuspended) ||
		!strings.Contains(refused, "action_denied") {
		t.Errorf("the suspended server's evidence: %s", refused)
	}
	// The audit log names the agent that used it through the server.
	if ev := strings.Join(stepOf(t, rep, inventory.StepAuditNamesUsers).Evidence, "\n"); !strings.Contains(ev, "1 call from 1 session used it") {
		t.Errorf("the users' evidence: %s", ev)
	}
	passes := strings.Join(stepOf(t, rep, inventory.StepCallPasses).Evidence, "\n")
	if !strings.Contains(passes, "tracker lists its tools again") || !strings.Contains(passes, agentapi.CodeDrillStopped) {
		t.Errorf("the evidence once switched back on: %s", passes)
	}
	if n := len(tr.Created()); n != 0 {
		t.Fatalf("a drill's call reached the server: %d", n)
	}
	listed("tracker.whoami")

	rep, err = d.inv().RunDrill(ctx, id, inventory.DrillFull, inventory.TriggerPerson)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, rep)
	if !rep.Passed || rep.EndState != oauth.StateRevoked {
		t.Fatalf("full drill: passed=%v end=%s advice=%s", rep.Passed, rep.EndState, rep.Advice)
	}
	if ev := strings.Join(stepOf(t, rep, inventory.StepCallRefused).Evidence, "\n"); !strings.Contains(ev, agentapi.CodeAuthRevoked) {
		t.Errorf("the revoked server's evidence: %s", ev)
	}
	stays := strings.Join(stepOf(t, rep, inventory.StepStaysRefused).Evidence, "\n")
	if !strings.Contains(stays, "everything.echo") || strings.Contains(stays, "tools that are neither") {
		t.Errorf("the other server's tools counted against the drill: %s", stays)
	}
}

func stepOf(t *testing.T, rep inventory.Report, name string) inventory.Step {
	t.Helper()
	for _, s := range rep.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("the report has no step %s: %+v", name, rep.Steps)
	return inventory.Step{}
}
