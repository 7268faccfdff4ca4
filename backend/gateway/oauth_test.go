//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// api is the provider's API behind the operation; it keeps the last
// access token it saw in memory (never printed) for introspection.
type api struct {
	*httptest.Server
	mu    sync.Mutex
	last  string
	hits  int
	paths []string
}

func newAPI(t *testing.T) *api {
	a := &api{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.last = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.hits++
		a.paths = append(a.paths, r.Method+" "+r.URL.Path)
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":42}`))
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *api) snapshot() (string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last, a.hits
}

// connectHydra connects an unattended authorization through the real
// loopback callback and registers tracker.create_issue on it.
func connectHydra(t *testing.T, w *world, h *hydratest.Hydra, ctr *hydratest.Counter, resURL string) string {
	t.Helper()
	client := h.CreateClient(t, hydratest.ClientSpec{AuthMethod: "none", RedirectURIs: []string{"http://127.0.0.1/callback"}})
	fv, err := w.oauth.Connect(context.Background(), oauth.ConnectRequest{
		Name: "tracker", Provider: "custom", Flow: oauth.FlowAuthorizationCode, Environment: "development",
		Endpoints: oauth.Endpoints{Issuer: h.Issuer, AuthorizationEndpoint: h.PublicURL + "/oauth2/auth", TokenEndpoint: ctr.URL + "/oauth2/token",
			RevocationEndpoint: ctr.URL + "/oauth2/revoke", IntrospectionEndpoint: h.AdminURL + "/admin/oauth2/introspect"},
		ClientID: client, ClientAuth: oauth.ClientAuthNone, Scopes: []string{"openid", "offline_access"}, Unattended: true, Owner: "alice", BackupRevoker: "bob",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if status, _, err := h.Browse(ctx, fv.AuthorizationURL); err != nil || status != 200 {
		t.Fatalf("browse: %d %v", status, err)
	}
	done, err := w.oauth.WaitFlow(ctx, fv.ID)
	if err != nil || done.State != oauth.FlowConnected {
		t.Fatalf("flow: %+v %v", done, err)
	}
	err = w.ops.Save(operation.Operation{
		Name: "tracker.create_issue", AuthorizationID: done.AuthorizationID, Description: "Create an issue in project A",
		Method: "POST", URLTemplate: resURL + "/projects/{project}/issues",
		Params:     []operation.Param{{Name: "project", Type: "string", Allowed: []string{"A"}, Required: true}},
		BodySchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","maxLength":200}},"required":["title"]}`),
		Approval:   operation.ApprovalSession,
	})
	if err != nil {
		t.Fatal(err)
	}
	return done.AuthorizationID
}

var issueArgs = map[string]any{"project": "A", "body": map[string]any{"title": "release notes"}}

// TestOperationSingleFlightAcrossAgents: 50 concurrent calls of a named
// operation from three agent processes, with an expired access token: one
// refresh reaches Hydra, no call fails, and the token family is still
// active afterwards. Then the one-click revoke: the next call is refused
// locally, with no request to the provider or the API.
func TestOperationSingleFlightAcrossAgents(t *testing.T) {
	const ttl = 4 * time.Second
	h := hydratest.Start(t, hydratest.Options{AccessTokenTTL: ttl})
	ctr := h.CountingProxy(t)
	w := newWorld(t, worldOpts{oauth: true})
	res := newAPI(t)
	id := connectHydra(t, w, h, ctr, res.URL)

	agents := make([]*agent, 3)
	for i := range agents {
		agents[i] = startAgent(t, w.runDir)
		agents[i].connect()
		// The operation is a tool; nothing on the MCP surface connects an
		// account, lists authorizations or hands out a token.
		r := agents[i].do(agentCmd{Op: "list"})
		got := slices.Sorted(slices.Values(r.Tools))
		if want := []string{"http.get", "http.request", "ssh.exec", "tracker.create_issue", "yett.request_access", "yett.status"}; !slices.Equal(got, want) {
			t.Fatalf("agents see tools %v, want exactly %v", got, want)
		}
		wait := agents[i].callAsync("tracker.create_issue", issueArgs)
		w.approveNext()
		if r := wait(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
			t.Fatalf("first call: %s %s", r.Text, r.Err)
		}
	}
	// Out of the allowed values: refused before anything is sent.
	if r := agents[0].call("tracker.create_issue", map[string]any{"project": "B", "body": map[string]any{"title": "x"}}); !r.IsError || !strings.Contains(r.Text, agentapi.CodeInvalid) {
		t.Fatalf("project B: %s", r.Text)
	}
	time.Sleep(ttl + 1500*time.Millisecond) // every access token Yett holds has expired, however the provider rounds expires_in
	before := ctr.TokenRequests()["refresh_token"]
	_, hitsBefore := res.snapshot()
	changesBefore := agents[0].do(agentCmd{Op: "list"}).Changes
	n := []int{17, 17, 16}
	waits := make([]func() agentReply, 3)
	for i, a := range agents {
		raw, _ := json.Marshal(issueArgs)
		if err := a.in.Encode(agentCmd{Op: "burst", Tool: "tracker.create_issue", Args: raw, N: n[i]}); err != nil {
			t.Fatal(err)
		}
		ch := make(chan agentReply, 1)
		go func(a *agent) {
			var r agentReply
			if a.out.Scan() {
				json.Unmarshal(a.out.Bytes(), &r)
			}
			ch <- r
		}(a)
		waits[i] = func() agentReply {
			select {
			case r := <-ch:
				return r
			case <-time.After(testWait):
				t.Fatal("no reply to a burst")
				return agentReply{}
			}
		}
	}
	for i, wait := range waits {
		if r := wait(); !r.OK || r.Failed != 0 {
			t.Errorf("agent %d: %d of %d calls failed: %s", i, r.Failed, n[i], r.Text)
		}
	}
	if got := ctr.TokenRequests()["refresh_token"] - before; got != 1 {
		t.Fatalf("%d refresh requests reached Hydra for 50 concurrent calls (want exactly 1)", got)
	}
	presented := ctr.RefreshTokensPresented()
	for i := range presented {
		if slices.Contains(presented[:i], presented[i]) {
			t.Fatal("a refresh token was presented twice")
		}
	}
	if got := agents[0].do(agentCmd{Op: "list"}).Changes; got != changesBefore {
		t.Errorf("a refresh told the agents their tool list changed (%d notifications)", got-changesBefore)
	}
	last, hits := res.snapshot()
	if hits-hitsBefore != 50 {
		t.Errorf("the API saw %d calls, want 50", hits-hitsBefore)
	}
	if !h.Introspect(t, last).Active {
		t.Fatal("the token family is not active after the burst")
	}

	// One-click revoke.
	rep, err := w.oauth.Revoke(context.Background(), id)
	if err != nil || rep.RetryPending {
		t.Fatalf("revoke: %+v %v", rep, err)
	}
	if h.Introspect(t, last).Active {
		t.Error("Hydra still reports the access token active after the revoke")
	}
	if len(w.gw.Broker().Sessions()) != 0 {
		t.Error("sessions survived the revocation of the authorization they could use")
	}
	tokBefore := ctr.TokenRequests()
	_, hitsBefore = res.snapshot()
	r := agents[1].call("tracker.create_issue", issueArgs)
	if !r.IsError || !strings.Contains(r.Text, agentapi.CodeAuthRevoked) {
		t.Fatalf("call after revoke: %s", r.Text)
	}
	if len(w.gw.Broker().Pending()) != 0 {
		t.Error("a revoked authorization's operation asked the person for approval")
	}
	_, hitsAfter := res.snapshot()
	tokAfter := ctr.TokenRequests()
	if hitsAfter != hitsBefore || tokAfter["refresh_token"] != tokBefore["refresh_token"] {
		t.Error("a call after the revoke reached the network")
	}
	for _, a := range agents {
		a.do(agentCmd{Op: "close"})
	}
}

// TestOperationCatalogueChangesReachAgents: the gateway finds operations in
// the catalogue's memory, so what the person changes there is what agents
// get on their next call: a removed operation is refused without a request,
// and one saved again is listed and served.
func TestOperationCatalogueChangesReachAgents(t *testing.T) {
	p, w, authz := clientCredentialsWorld(t, "CANARY-catalogue-client-secret")
	op := operation.Operation{
		Name: "tracker.list_items", AuthorizationID: authz, Method: "GET", URLTemplate: p.URL + "/resource",
		Params:   []operation.Param{{Name: "state", Type: "string", Allowed: []string{"open"}, Required: true}},
		Approval: operation.ApprovalSession,
	}
	if err := w.ops.Save(op); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"state": "open"}
	a := startAgent(t, w.runDir)
	a.connect()
	listed := func() bool { return slices.Contains(a.do(agentCmd{Op: "list"}).Tools, op.Name) }
	if !listed() {
		t.Fatal("the operation is not listed")
	}
	wait := a.callAsync(op.Name, args)
	w.approveNext()
	if r := wait(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("first call: %s %s", r.Text, r.Err)
	}

	before := p.TokenRequests()
	if err := w.ops.Remove(op.Name); err != nil {
		t.Fatal(err)
	}
	if r := a.call(op.Name, args); !r.IsError && r.Err == "" {
		t.Fatalf("a removed operation ran: %s", r.Text)
	}
	if after := p.TokenRequests(); !maps.Equal(after, before) {
		t.Fatalf("a call of a removed operation reached the provider: %v -> %v", before, after)
	}
	waitFor(t, "the removed operation to leave the tool list", func() bool { return !listed() })

	op.Description = "List open items"
	if err := w.ops.Save(op); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the operation to be listed again", listed)
	if r := a.call(op.Name, args); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("the operation saved again: %s %s", r.Text, r.Err)
	}
	a.do(agentCmd{Op: "close"})
}

// clientCredentialsWorld is a world with an authorization "tracker"
// connected by client credentials to an in-process provider.
func clientCredentialsWorld(t *testing.T, secret string) (*oauthtest.Provider, *world, string) {
	t.Helper()
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: secret})
	w := newWorld(t, worldOpts{oauth: true})
	fv, err := w.oauth.Connect(context.Background(), oauth.ConnectRequest{
		Name: "tracker", Provider: "custom", Flow: oauth.FlowClientCredentials, Environment: "development",
		Endpoints: oauth.Endpoints{Issuer: p.URL}, ClientID: oauthtest.DefaultClientID, ClientAuth: oauth.ClientAuthSecret,
		ClientSecret: []byte(secret), Owner: "alice", BackupRevoker: "bob",
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, w, fv.AuthorizationID
}

// waitFor polls cond until it holds, for at most testWait.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", testWait, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOperationURLCheckedAgainstAPIHostsAtCall: an operation whose URL is
// not on its account's API hosts never gets the token, even when it is in
// the catalogue without passing Save's check (an operation kept by an
// earlier version, or a row written into operations.db by hand). The call
// is refused before the token is fetched: no token request, no request to
// the other host. The account's own operation runs.
func TestOperationURLCheckedAgainstAPIHostsAtCall(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: "CANARY-apihosts-client-secret"})
	own, collector := newAPI(t), newAPI(t)
	ownURL := strings.Replace(own.URL, "127.0.0.1", "localhost", 1)
	w := newWorld(t, worldOpts{oauth: true})
	fv, err := w.oauth.Connect(context.Background(), oauth.ConnectRequest{
		Name: "tracker", Provider: "custom", Flow: oauth.FlowClientCredentials, Environment: "development",
		Endpoints: oauth.Endpoints{Issuer: p.URL}, ClientID: oauthtest.DefaultClientID, ClientAuth: oauth.ClientAuthSecret,
		ClientSecret: []byte("CANARY-apihosts-client-secret"), Owner: "alice", BackupRevoker: "bob",
		APIHosts: []string{"localhost"},
	})
	if err != nil {
		t.Fatal(err)
	}
	good := operation.Operation{
		Name: "tracker.list_items", AuthorizationID: fv.AuthorizationID, Method: "GET", URLTemplate: ownURL + "/items",
		Approval: operation.ApprovalSession,
	}
	if err := w.ops.Save(good); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.Name, bad.URLTemplate = "tracker.export", collector.URL+"/collect"
	if err := w.ops.Save(bad); !errors.Is(err, operation.ErrInvalid) {
		t.Fatalf("Save accepted an operation off the account's API hosts: %v", err)
	}

	// The row Save refused, written into the catalogue's file directly.
	w.stop()
	w.ops.Close()
	spec, _ := json.Marshal(bad)
	db, err := gorm.Open(sqlite.Open(filepath.Join(w.dataDir, operation.FileName)), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`INSERT INTO operations (name, authorization_id, spec, updated_at) VALUES (?, ?, ?, ?)`,
		bad.Name, bad.AuthorizationID, string(spec), time.Now().Unix()).Error; err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close()
	}
	if w.ops, err = operation.Open(operation.Config{DataDir: w.dataDir, Authorizations: w.oauth}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.ops.Close() })
	w.start()

	a := startAgent(t, w.runDir)
	a.connect()
	wait := a.callAsync(good.Name, map[string]any{})
	w.approveNext()
	if r := wait(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("the account's own operation: %s %s", r.Text, r.Err)
	}
	if tok, hits := own.snapshot(); hits != 1 || tok == "" {
		t.Fatalf("the account's API saw %d requests (token sent: %v)", hits, tok != "")
	}
	before := p.TokenRequests()
	r := a.call(bad.Name, map[string]any{})
	if !r.IsError || !strings.Contains(r.Text, "not on its account's API hosts") {
		t.Fatalf("the operation off the API hosts: %s %s", r.Text, r.Err)
	}
	if _, hits := collector.snapshot(); hits != 0 {
		t.Fatalf("the other host got %d requests", hits)
	}
	if after := p.TokenRequests(); !maps.Equal(after, before) {
		t.Fatalf("the refused call reached the provider: %v -> %v", before, after)
	}
	waitAudit(t, w, "the refusal", func(e audit.Event) bool {
		return e.Type == audit.EventActionDenied && e.Reason == audit.ReasonPolicy && e.Action != nil &&
			e.Action.Operation == bad.Name && strings.HasPrefix(e.Action.Target, "127.0.0.1")
	})
	a.do(agentCmd{Op: "close"})
}

// TestRefreshOnlyForARecordedIntent (seed 002: renew only to complete an
// approved action): with an expired access token, a call the journal
// refuses (its idempotency key names an earlier call with another request)
// makes no refresh, and the refresh a call does make follows that call's
// durable intent in the audit log.
func TestRefreshOnlyForARecordedIntent(t *testing.T) {
	const ttl = 3 * time.Second
	h := hydratest.Start(t, hydratest.Options{AccessTokenTTL: ttl})
	ctr := h.CountingProxy(t)
	w := newWorld(t, worldOpts{oauth: true})
	res := newAPI(t)
	connectHydra(t, w, h, ctr, res.URL)
	a := startAgent(t, w.runDir)
	a.connect()
	defer a.do(agentCmd{Op: "close"})
	args := func(key, title string) map[string]any {
		return map[string]any{"project": "A", "body": map[string]any{"title": title}, "idempotency_key": key}
	}
	wait := a.callAsync("tracker.create_issue", args("k-1", "first"))
	w.approveNext()
	if r := wait(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("first call: %s %s", r.Text, r.Err)
	}
	time.Sleep(ttl + 1500*time.Millisecond) // the access token has expired
	before := ctr.TokenRequests()["refresh_token"]
	_, hitsBefore := res.snapshot()
	if r := a.call("tracker.create_issue", args("k-1", "another request")); !r.IsError || !strings.Contains(r.Text, agentapi.DetailKeyReused) {
		t.Fatalf("a reused key: %s", r.Text)
	}
	if got := ctr.TokenRequests()["refresh_token"] - before; got != 0 {
		t.Fatalf("a call the journal refused made %d refresh requests", got)
	}
	if _, hits := res.snapshot(); hits != hitsBefore {
		t.Fatal("a call the journal refused reached the API")
	}
	if r := a.call("tracker.create_issue", args("k-2", "second")); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("second call: %s %s", r.Text, r.Err)
	}
	if got := ctr.TokenRequests()["refresh_token"] - before; got != 1 {
		t.Fatalf("the second call made %d refresh requests, want 1", got)
	}
	intent, refreshed := -1, -1
	for i, e := range auditEvents(t, w) {
		switch {
		case e.Type == audit.EventActionRequested && e.Action != nil && e.Action.IdempotencyRef == "k-2":
			intent = i
		case e.Type == audit.EventTokenRefreshed && refreshed < 0 && intent >= 0:
			refreshed = i
		case e.Type == audit.EventTokenRefreshed && intent < 0:
			t.Fatalf("a token_refreshed entry (%d) before the intent it served", i)
		}
	}
	if intent < 0 || refreshed < intent {
		t.Fatalf("intent at %d, refresh at %d: the refresh must follow the durable intent", intent, refreshed)
	}
}

// TestOperationReadsPassWritesAsk: with the approval "writes", an
// operation the person marked read-only goes on the run's session approval
// alone, and one not marked so asks on every call, approved or denied on
// its own card.
func TestOperationReadsPassWritesAsk(t *testing.T) {
	p, w, authz := clientCredentialsWorld(t, "CANARY-writes-client-secret")
	for _, op := range []operation.Operation{
		{Name: "tracker.list_items", AuthorizationID: authz, Method: "GET", URLTemplate: p.URL + "/resource",
			Approval: operation.ApprovalWrites, ReadOnly: true},
		{Name: "tracker.touch_items", AuthorizationID: authz, Method: "POST", URLTemplate: p.URL + "/resource",
			Approval: operation.ApprovalWrites},
	} {
		if err := w.ops.Save(op); err != nil {
			t.Fatal(err)
		}
	}
	a := startAgent(t, w.runDir)
	a.connect()
	wait := a.callAsync("tracker.list_items", map[string]any{})
	w.approveNext()
	if r := wait(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("first read: %s %s", r.Text, r.Err)
	}
	if r := a.call("tracker.list_items", map[string]any{}); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("second read: %s %s", r.Text, r.Err)
	}
	if pend := w.gw.Broker().Pending(); len(pend) != 0 {
		t.Fatalf("a read-only operation raised a card: %+v", pend)
	}
	for _, yes := range []bool{true, false} {
		wait := a.callAsync("tracker.touch_items", map[string]any{})
		card := w.pending(approval.KindCall)
		if card.Operation != "tracker.touch_items" || card.Method != "POST" {
			t.Fatalf("card %+v", card)
		}
		w.gw.Broker().Answer(card.ID, yes, "test")
		r := wait()
		if yes && (r.IsError || !strings.Contains(r.Text, `"status":200`)) || !yes && !strings.Contains(r.Text, "DENIED") {
			t.Fatalf("write approved=%v: %s %s", yes, r.Text, r.Err)
		}
	}
	a.do(agentCmd{Op: "close"})
}
