//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
)

// connectTracker connects the tracker's authorization as a person does
// (discovery, dynamic registration, the consent in a browser) and defines
// the server with it.
func connectTracker(t *testing.T, w *world, h *hydratest.Hydra, tr *mcpservertest.Tracker) (vault.MCPServerView, upstream.OAuthFlow) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, err := upstream.ConnectOAuth(ctx, w.oauth, action.New(action.Config{}).GuardedDial, nil, upstream.OAuthRequest{
		Server: "tracker", URL: tr.URL + "/mcp", Environment: "development", Owner: "ana@example.com", BackupRevoker: "bo@example.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	if status, _, err := h.Browse(ctx, f.Flow.AuthorizationURL); err != nil || status != 200 {
		t.Fatalf("the consent: %d %v", status, err)
	}
	done, err := w.oauth.WaitFlow(ctx, f.Flow.ID)
	if err != nil || done.State != oauth.FlowConnected {
		t.Fatalf("the flow: %+v %v", done, err)
	}
	s, err := w.vault.MCPServers().Add(vault.NewMCPServer{
		Name: "tracker", Transport: vault.TransportHTTP, URL: tr.URL + "/mcp", OAuth: done.AuthorizationID,
		MCPServerSettings: vault.MCPServerSettings{Approval: vault.ApprovalSession, Tools: map[string]vault.Approval{"create_issue": vault.ApprovalPerCall},
			Owner: "ana@example.com", BackupRevoker: "bo@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

// A remote MCP server behind a real OAuth provider, through Yett: the
// person connects it by discovery and dynamic registration and consents
// in a browser; a real agent (the TypeScript SDK through yett mcp) lists
// and calls its tools with session and per-call approval; twenty
// concurrent calls after the access token expired cause one refresh; the
// token never reaches the agent though the server echoes it; a drill
// that suspends the authorization takes the server's tools away at once
// and refuses its calls without sending them (AUTH_SUSPENDED, as for an
// operation on the account), and resuming brings them back.
func TestUpstreamOAuthServerThroughYett(t *testing.T) {
	const ttl = 4 * time.Second
	h := hydratest.Start(t, hydratest.Options{AccessTokenTTL: ttl, DynamicRegistration: true})
	wire := &tokenWire{base: http.DefaultTransport}
	w := newWorld(t, worldOpts{oauth: true, upstream: true, oauthHTTP: &http.Client{Transport: wire, Timeout: 30 * time.Second}})
	tr := mcpservertest.StartTracker(t, h.Issuer, h.AdminURL+"/admin/oauth2/introspect")
	// The manager lets go of the server's streams before the server closes.
	t.Cleanup(w.upstream.Close)
	a := startTSAgent(t, w)
	s, f := connectTracker(t, w, h, tr)
	if !f.Registered || f.Discovery.Resource != tr.URL+"/mcp" || f.Discovery.Issuer != h.Issuer {
		t.Fatalf("discovery: %+v", f)
	}
	az, err := w.oauth.Authorizations()
	if err != nil || len(az) != 1 || az[0].Resource != tr.URL+"/mcp" || az[0].State != oauth.StateActive {
		t.Fatalf("the authorization under custody: %+v %v", az, err)
	}
	if tr.Unauthenticated() == 0 {
		t.Fatal("discovery never asked the server without a token")
	}
	// The resource indicator (RFC 8707) is on the authorization request
	// and on the code exchange.
	if u, _ := url.Parse(f.Flow.AuthorizationURL); u.Query().Get("resource") != tr.URL+"/mcp" {
		t.Fatalf("the authorization request names no resource: %s", f.Flow.AuthorizationURL)
	}
	if got := wire.requests(); len(got) != 1 || got[0] != "authorization_code "+tr.URL+"/mcp" {
		t.Fatalf("token requests at connection: %v", got)
	}
	waitListed(t, a, "tracker.whoami", "tracker.create_issue")

	// Session approval, then the echo: the token the server saw is not
	// what the agent reads.
	wait := a.send(map[string]any{"op": "call", "tool": "tracker.whoami", "args": map[string]any{}})
	sess := w.pending(approval.KindSession)
	if sess.Tool != "tracker.whoami" {
		t.Fatalf("session card: %+v", sess)
	}
	if err := w.gw.Broker().Answer(sess.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if !r.OK || !strings.Contains(r.Text, "You came with Bearer [REDACTED]") {
		t.Fatalf("whoami: %+v", r)
	}
	for tok := range tr.Tokens() {
		if strings.Contains(r.Text, tok) {
			t.Fatal("the access token reached the agent")
		}
	}

	// A tool the person set to per-call asks, with its arguments.
	wait = a.send(map[string]any{"op": "call", "tool": "tracker.create_issue", "args": map[string]any{"title": "release notes"}})
	card := w.pendingCall(t, false)
	if card.Tool != "tracker.create_issue" || !strings.Contains(card.Arguments, "release notes") {
		t.Fatalf("per-call card: %+v", card)
	}
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if r := wait(); !r.OK || r.IsError || !strings.Contains(r.Text, "created release notes") {
		t.Fatalf("create_issue: %+v", r)
	}

	// Twenty concurrent calls once the token expired: one refresh.
	time.Sleep(ttl + 1500*time.Millisecond)
	before := tr.Tokens()
	refreshes := func() int {
		n := 0
		for _, e := range auditEvents(t, w) {
			if e.Type == audit.EventTokenRefreshed && e.Success != nil && *e.Success {
				n++
			}
		}
		return n
	}
	refreshedBefore := refreshes()
	waits := make([]func() tsReply, 20)
	for i := range waits {
		waits[i] = a.send(map[string]any{"op": "call", "tool": "tracker.whoami", "args": map[string]any{"idempotency_key": fmt.Sprintf("who-%d", i)}})
	}
	for i, wt := range waits {
		if r := wt(); !r.OK || r.IsError || !strings.Contains(r.Text, "Bearer [REDACTED]") {
			t.Fatalf("concurrent call %d: %+v", i, r)
		}
	}
	var fresh []string
	for tok := range tr.Tokens() {
		if _, old := before[tok]; !old {
			fresh = append(fresh, tok)
		}
	}
	if len(fresh) != 1 {
		t.Fatalf("the server saw %d new access tokens after the expiry, want 1 (one refresh)", len(fresh))
	}
	if n := refreshes() - refreshedBefore; n != 1 {
		t.Fatalf("%d refreshes recorded for 20 concurrent calls, want 1", n)
	}
	if got := wire.requests(); len(got) != 2 || got[1] != "refresh_token "+tr.URL+"/mcp" {
		t.Fatalf("token requests after 20 concurrent calls: %v (want one refresh, with the resource)", got)
	}

	// The server refuses the token it holds before its expiry: Yett drops
	// it, refreshes once, and sends the refused request again; the call
	// goes through and the agent never hears of it.
	tr.RefuseTokensSeen()
	seenBefore := tr.Tokens()
	refreshedBefore = refreshes()
	if r := a.do(map[string]any{"op": "call", "tool": "tracker.whoami", "args": map[string]any{}}); !r.OK || r.IsError ||
		!strings.Contains(r.Text, "Bearer [REDACTED]") {
		t.Fatalf("a call after the server refused its token: %+v", r)
	}
	if n := refreshes() - refreshedBefore; n != 1 {
		t.Fatalf("%d refreshes after the server refused the token, want 1", n)
	}
	if fresh := len(tr.Tokens()) - len(seenBefore); fresh != 1 {
		t.Fatalf("the server accepted %d new tokens after refusing the old one, want 1", fresh)
	}

	// The drill: suspended, the server's tools go, the sessions that used
	// it end, and a call is refused before anything is sent.
	if err := w.oauth.Suspend(context.Background(), s.OAuth, "drill"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, a, "tracker.whoami")
	hits := tr.Tokens()
	r = a.do(map[string]any{"op": "call", "tool": "tracker.whoami", "args": map[string]any{}})
	if r.Structured["outcome"] != agentapi.CodeAuthSuspended || !strings.Contains(r.Text, `the account behind the MCP server "tracker" is switched off`) {
		t.Fatalf("a call during the drill: %+v", r)
	}
	after := tr.Tokens()
	for tok, n := range after {
		if n != hits[tok] {
			t.Fatal("a call reached the server while its authorization was suspended")
		}
	}
	if st := w.upstream.Statuses(); len(st) != 1 || st[0].State != upstream.StateFailed || !strings.Contains(st[0].Problem, "OAuth authorization cannot serve") {
		t.Fatalf("status during the drill: %+v", st)
	}
	if err := w.oauth.Resume(context.Background(), s.OAuth); err != nil {
		t.Fatal(err)
	}
	waitListed(t, a, "tracker.whoami")
	// The drill ended the sessions that used the authorization: the
	// agent asks again.
	wait = a.send(map[string]any{"op": "call", "tool": "tracker.whoami", "args": map[string]any{}})
	again := w.pending(approval.KindSession)
	if !strings.Contains(string(again.Change), "revoked") {
		t.Fatalf("the session card after the drill: %+v", again)
	}
	if err := w.gw.Broker().Answer(again.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if r := wait(); !r.OK || r.IsError || !strings.Contains(r.Text, "Bearer [REDACTED]") {
		t.Fatalf("after the drill: %+v", r)
	}
	w.checkNoLeak()
	for tok := range tr.Tokens() {
		w.logMu.Lock()
		leaked := strings.Contains(w.logs.String(), tok)
		w.logMu.Unlock()
		if leaked {
			t.Fatal("an access token is in Yett's log")
		}
	}
}

// tokenWire records the grant type and resource of every token request
// custody sends Hydra (the form's other values are not kept).
type tokenWire struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (tw *tokenWire) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/oauth2/token") && r.GetBody != nil {
		if b, err := r.GetBody(); err == nil {
			raw, _ := io.ReadAll(b)
			if form, err := url.ParseQuery(string(raw)); err == nil {
				tw.mu.Lock()
				tw.seen = append(tw.seen, form.Get("grant_type")+" "+form.Get("resource"))
				tw.mu.Unlock()
			}
		}
	}
	return tw.base.RoundTrip(r)
}

func (tw *tokenWire) requests() []string {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return append([]string(nil), tw.seen...)
}

// waitGone waits until the agent's tools/list no longer holds name.
func waitGone(t *testing.T, a *tsAgent, name string) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		var tools []listedTool
		if err := json.Unmarshal(a.do(map[string]any{"op": "list"}).Tools, &tools); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tl := range tools {
			found = found || tl.Name == name
		}
		if !found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent still sees %s", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
