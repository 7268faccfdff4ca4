//go:build linux

package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

const serveOAuthSecret = "CANARY-serve-oauth-secret-91c4"

// seedOperation connects an account and defines an operation the way the
// app does (yett serve makes neither): client credentials against p, and
// tracker.list_items on its resource.
func seedOperation(t *testing.T, p *oauthtest.Provider) func(string, *vault.Vault) {
	return func(dataDir string, v *vault.Vault) {
		t.Helper()
		rs, err := v.AuditRecipient()
		if err != nil {
			t.Fatal(err)
		}
		recipient, err := age.ParseX25519Recipient(rs)
		if err != nil {
			t.Fatal(err)
		}
		log, _, err := audit.Open(audit.Options{Dir: filepath.Join(dataDir, gateway.AuditDir), Recipient: recipient, Carried: gateway.CarriedAudit(dataDir)})
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		m, err := oauth.Open(oauth.Config{DataDir: dataDir, Vault: v, Audit: log})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		f, err := m.Connect(context.Background(), oauth.ConnectRequest{
			Name: "tracker", Provider: "custom", Endpoints: oauth.Endpoints{Issuer: p.URL}, ClientID: oauthtest.DefaultClientID,
			ClientAuth: oauth.ClientAuthSecret, ClientSecret: []byte(serveOAuthSecret), Scopes: []string{"read"},
			Environment: "development", Flow: oauth.FlowClientCredentials, Owner: "alice", BackupRevoker: "bob",
		})
		if err != nil {
			t.Fatal(err)
		}
		ops, err := operation.Open(operation.Config{DataDir: dataDir, Authorizations: m})
		if err != nil {
			t.Fatal(err)
		}
		defer ops.Close()
		if err := ops.Save(operation.Operation{
			Name: "tracker.list_items", AuthorizationID: f.AuthorizationID, Description: "List tracker items",
			Method: "GET", URLTemplate: p.URL + "/resource", Approval: operation.ApprovalSession,
			Params: []operation.Param{{Name: "state", Type: "string", Allowed: []string{"open", "closed"}, Required: true}},
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeServesOperationsFromTheApp: yett serve opens the OAuth manager and
// the operation catalogue on the same data directory and serves the operations the app defined, with
// the token it holds (the agent never sees one); it records vault lock into
// the log it shares with the gateway and the manager.
func TestServeServesOperationsFromTheApp(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: serveOAuthSecret})
	w := startServeSeeded(t, seedOperation(t, p))
	w.typeLine(t, servePassphrase)
	w.tty.waitFor(t, "gateway listening")
	s := w.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "tracker.list_items" }) {
		t.Fatalf("the app's operation is not served; tools: %v", toolNames(tools.Tools))
	}
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "tracker.list_items", Arguments: map[string]any{"state": "open"}})
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{text: callText(res)}
	}()
	w.tty.waitFor(t, "[1] Approve this agent run?")
	w.typeLine(t, w.tty.approveLine(t, 1))
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no answer after approval")
	}
	if r.err != nil || !strings.Contains(r.text, `"status":200`) || !strings.Contains(r.text, `\"scope\":\"read\"`) {
		t.Fatalf("operation call: %+v", r)
	}
	if got := p.TokenRequests()[oauthtest.GrantClientCredentials]; got != 1 {
		t.Fatalf("%d client-credentials token requests; serve should use the token the app stored", got)
	}

	w.typeLine(t, "lock")
	w.tty.waitFor(t, "Vault locked")
	w.typeLine(t, "quit")
	w.tty.waitFor(t, "yett serve: stopped")
	if code := waitExit(t, w.cmd); code != 0 {
		t.Fatalf("yett serve exited with %d; stderr:\n%s", code, w.stderr.String())
	}
	for name, out := range map[string]string{"terminal": w.tty.String(), "stderr": w.stderr.String(), "agent": r.text} {
		if strings.Contains(out, serveOAuthSecret) {
			t.Errorf("client secret in %s", name)
		}
	}

	v, err := vault.Open(w.dataDir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Unlock(vault.Passphrase(servePassphrase)); err != nil {
		t.Fatal(err)
	}
	id, err := v.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	count := map[audit.EventType]int{}
	var boot string
	for e, err := range audit.ReadEvents(filepath.Join(w.dataDir, gateway.AuditDir, audit.LogFile), id) {
		if err != nil {
			t.Fatal(err)
		}
		count[e.Event.Type]++
		if e.Event.Type == audit.EventGatewayStarted {
			boot = e.Event.BootID
		}
		if e.Event.Type == audit.EventVaultLocked && (e.Event.BootID != boot || e.Event.Reason != "user") {
			t.Errorf("vault_locked under boot %q for %q: want boot %q, reason user", e.Event.BootID, e.Event.Reason, boot)
		}
	}
	for typ, want := range map[audit.EventType]int{
		audit.EventAuthorizationConnected: 1, audit.EventGatewayStarted: 1, audit.EventGatewayStopped: 1,
		audit.EventVaultLocked: 1, audit.EventActionResult: 1,
	} {
		if count[typ] != want {
			t.Errorf("%d %s entries, want %d (all: %v)", count[typ], typ, want, count)
		}
	}
}

func toolNames(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}
