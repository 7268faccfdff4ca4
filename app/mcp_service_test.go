//go:build unix

package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

type mcpFixture struct {
	dir  string // the data directory
	v    *vault.Vault
	k    *keeper.Keeper
	svc  *MCPService
	rec  *recorder
	logs *syncbuf.Buffer
	// opened are the addresses custody asked the browser to open.
	opened chan string
}

// newMCPFixture runs a real vault and keeper (its gateway, OAuth custody
// and the upstream servers' manager) and the service over them.
func newMCPFixture(t *testing.T) *mcpFixture {
	t.Helper()
	dir := t.TempDir()
	v, err := vault.Open(filepath.Join(dir, "data"), vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Create(vault.Passphrase("correct horse battery staple"), false); err != nil {
		t.Fatal(err)
	}
	f := &mcpFixture{dir: filepath.Join(dir, "data"), v: v, rec: &recorder{}, logs: &syncbuf.Buffer{}, opened: make(chan string, 4)}
	logger := slog.New(slog.NewTextHandler(f.logs, nil))
	f.k, err = keeper.Open(keeper.Config{DataDir: filepath.Join(dir, "data"), RuntimeDir: t.TempDir(), Vault: v, Logger: logger,
		OpenBrowser: func(u string) { f.opened <- u }})
	if err != nil {
		t.Fatal(err)
	}
	sink := &eventSink{}
	sink.attach(f.rec.emit)
	f.svc = newMCPService(v, f.k, sink, logger)
	f.svc.inventory = newInventoryService(sink, logger)
	f.svc.inventory.attach(f.k.State().Inventory)
	t.Cleanup(func() {
		f.svc.inventory.attach(nil)
		f.svc.inventory.close()
		f.svc.close()
		v.Lock("test_end")
		f.k.Close()
		v.Close()
	})
	return f
}

// server waits until the view of the server named name satisfies ok.
func (f *mcpFixture) server(t *testing.T, name string, ok func(MCPServerView) bool) MCPServerView {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := f.svc.Servers()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Name == name && ok(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never got there: %+v", name, list)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The window's side of MCP servers with the real server-everything from
// npm: added with a secret variable that no view, event or error carries
// back; listed with its tools and their hints once Yett started it; a
// tool's mode set over its hint without a restart; removed.
func TestMCPServiceLocalServer(t *testing.T) {
	f := newMCPFixture(t)
	node, args := mcpservertest.Everything(t)
	added, err := f.svc.AddServer(MCPServerForm{Name: "everything", Transport: vault.TransportStdio, Command: filepath.Base(node), Args: args,
		Secrets: []MCPField{{Name: "API_TOKEN", Value: canary}}, Environment: "development",
		Settings: MCPSettingsForm{Approval: "writes", Owner: "ana", BackupRevoker: "luis"}})
	if err != nil {
		t.Fatal(err)
	}
	if added.Command != node || strings.Join(added.SecretNames, ",") != "API_TOKEN" {
		t.Fatalf("added: %+v", added)
	}
	ready := f.server(t, "everything", func(s MCPServerView) bool { return s.State == upstream.StateReady && len(s.Tools) > 3 })
	var getEnv *MCPToolView
	for i, tl := range ready.Tools {
		if tl.Name == "get-env" {
			getEnv = &ready.Tools[i]
		}
	}
	if getEnv == nil || !getEnv.ReadOnlyHint || getEnv.AsksEachCall || getEnv.Approval != "" {
		t.Fatalf("get-env as listed: %+v", getEnv)
	}
	// Its owner, backup revoker and environment, all given in the form:
	// under control from the start.
	if !ready.Controlled {
		t.Fatalf("a server added with who answers for it is not under control: %+v", ready.Problems)
	}
	set := ready.Settings
	set.Tools = []MCPToolMode{{Tool: "get-env", Approval: "per_call"}}
	if _, err := f.svc.UpdateServer(ready.ID, set); err != nil {
		t.Fatal(err)
	}
	after := f.server(t, "everything", func(s MCPServerView) bool {
		for _, tl := range s.Tools {
			if tl.Name == "get-env" {
				return tl.Approval == "per_call" && tl.AsksEachCall
			}
		}
		return false
	})
	if after.State != upstream.StateReady {
		t.Fatalf("a settings edit restarted the server: %+v", after)
	}
	views, _ := json.Marshal(after)
	if strings.Contains(string(views), canary) || strings.Contains(f.rec.all(), canary) || strings.Contains(f.logs.String(), canary) {
		t.Fatal("the secret reached a view, an event or the log")
	}
	if !strings.Contains(f.rec.all(), EventMCPChanged) {
		t.Fatalf("no %s event: %s", EventMCPChanged, f.rec.all())
	}
	// A bad command is refused in words; a server that asks no OAuth is
	// told apart from one that cannot be discovered.
	if _, err := f.svc.AddServer(MCPServerForm{Name: "nope", Transport: vault.TransportStdio, Command: "no-such-command-yett"}); err == nil ||
		!strings.Contains(err.Error(), "give its full path") {
		t.Fatalf("a missing command: %v", err)
	}
	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer open.Close()
	if _, err := f.svc.ConnectServer(MCPServerForm{Name: "open", Transport: vault.TransportHTTP, URL: open.URL + "/mcp", OAuth: true,
		Environment: "development"}); err == nil || !strings.Contains(err.Error(), "without asking for authorization") {
		t.Fatalf("a server that asks no OAuth: %v", err)
	}
	if err := f.svc.RemoveServer(ready.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := f.svc.Servers(); len(list) != 0 {
		t.Fatalf("after the removal: %+v", list)
	}
}

// A remote server behind real Ory Hydra, connected from the window: the
// discovery is shown, the consent happens in the browser, and once the
// account is connected the server is added with it (EventMCPConnect),
// ready with its tools; a name taken meanwhile gets the account revoked
// again rather than left serving nothing.
func TestMCPServiceConnectsAnOAuthServer(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{DynamicRegistration: true})
	tr := mcpservertest.StartTracker(t, h.Issuer, h.AdminURL+"/admin/oauth2/introspect")
	f := newMCPFixture(t)
	form := MCPServerForm{Name: "tracker", Transport: vault.TransportHTTP, URL: tr.URL + "/mcp", OAuth: true, Environment: "staging",
		Settings: MCPSettingsForm{Approval: "writes", Owner: "ana", BackupRevoker: "luis"}}
	c, err := f.svc.ConnectServer(form)
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer != h.Issuer || c.Resource != tr.URL+"/mcp" || !c.Registered || c.Flow.State != oauth.FlowWaiting || c.Server != "tracker" {
		t.Fatalf("the connection: %+v", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if status, _, err := h.Browse(ctx, <-f.opened); err != nil || status != 200 {
		t.Fatalf("the consent: %d %v", status, err)
	}
	s := f.server(t, "tracker", func(s MCPServerView) bool { return s.State == upstream.StateReady && len(s.Tools) == 2 })
	if s.AuthorizationID == "" || s.AuthorizationName != "MCP server tracker" || !s.Controlled {
		t.Fatalf("the server's account: %+v", s)
	}
	if !strings.Contains(f.rec.all(), EventMCPConnect+` {"flowId":"`+c.Flow.FlowID+`","serverId":"`+s.ID+`","error":""}`) {
		t.Fatalf("no connect event for the server: %s", f.rec.all())
	}

	// The same name again: the second account is connected, the server
	// cannot be added, and the account goes.
	if _, err := f.svc.ConnectServer(form); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a name in use: %v", err)
	}
	race := form
	race.Name = "tracker2"
	c2, err := f.svc.ConnectServer(race)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.v.MCPServers().Add(vault.NewMCPServer{Name: "tracker2", Transport: vault.TransportHTTP, URL: tr.URL + "/other"}); err != nil {
		t.Fatal(err)
	}
	if status, _, err := h.Browse(ctx, <-f.opened); err != nil || status != 200 {
		t.Fatalf("the second consent: %d %v", status, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(f.rec.all(), `"flowId":"`+c2.Flow.FlowID+`","serverId":"","error":"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no failed connect event: %s", f.rec.all())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(f.rec.all(), "The account just connected was revoked.") {
		t.Fatalf("the failure does not say the account went: %s", f.rec.all())
	}
	list, err := f.k.State().OAuth.Authorizations()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.Name == "MCP server tracker2" && a.State != oauth.StateRevoked {
			t.Fatalf("the account of a server never added: %+v", a)
		}
	}
}

// A credential added with its owner, backup revoker and environment (the
// add form asks for them) is under control in the owner inventory from the
// start; one added without them is not, and says what it misses.
func TestAddedCredentialIsUnderControl(t *testing.T) {
	f := newMCPFixture(t)
	vs := newVaultService(f.v, &eventSink{}, slog.New(slog.DiscardHandler), false)
	defer vs.close()
	vs.inventory = f.svc.inventory
	add := func(name, owner, backup, env string) CredentialView {
		t.Helper()
		c, err := vs.AddCredential(NewCredentialForm{Name: name, Secret: canary, Format: "bearer", Hosts: []string{name + ".example.com"},
			Approval: "session", Owner: owner, BackupRevoker: backup, Environment: env})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	owned := add("owned", "ana", "ana", "production")
	bare := add("bare", "", "", "")
	rows := f.svc.inventory.rowsByID(slog.New(slog.DiscardHandler), "test")
	if r := rows[owned.ID]; !r.Controlled || r.Owner != "ana" || r.BackupRevoker != "ana" || r.Environment != "production" {
		t.Fatalf("the credential added with who answers for it: %+v", r)
	}
	if r := rows[bare.ID]; r.Controlled || len(r.Missing) == 0 {
		t.Fatalf("the credential added without: %+v", r)
	}
	if strings.Contains(f.logs.String(), canary) {
		t.Fatal("the secret is in the log")
	}
}

// TestAddedHostIsUnderControl: an SSH host added with its owner, backup
// revoker (kept on the host) and environment (kept by the inventory) is
// under control at once, and the view the form gets back says so.
func TestAddedHostIsUnderControl(t *testing.T) {
	f := newMCPFixture(t)
	s := newSSHService(f.k.SSHHosts(), f.v, &eventSink{}, slog.New(slog.DiscardHandler))
	defer s.close()
	s.inventory = f.svc.inventory
	owned, err := s.AddHost(SSHHostForm{Name: "db-1", Address: "127.0.0.1", Port: 22, User: "ops",
		Settings: SSHSettingsForm{Approval: "per_call", Owner: "ana", BackupRevoker: "ana"}, Environment: "production"})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := s.AddHost(SSHHostForm{Name: "db-2", Address: "127.0.0.1", Port: 22, User: "ops", Settings: SSHSettingsForm{Approval: "per_call"}})
	if err != nil {
		t.Fatal(err)
	}
	if !owned.Controlled {
		t.Errorf("the view of the host added with who answers for it says it is not under control: %+v", owned.Problems)
	}
	rows := f.svc.inventory.rowsByID(slog.New(slog.DiscardHandler), "test")
	if r := rows[owned.ID]; !r.Controlled || r.Owner != "ana" || r.BackupRevoker != "ana" || r.Environment != "production" {
		t.Fatalf("the host added with who answers for it: %+v", r)
	}
	if r := rows[bare.ID]; r.Controlled || len(r.Missing) == 0 || bare.Controlled {
		t.Fatalf("the host added without: %+v", r)
	}
}
