package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
)

// Issue 20: every grant the provider holds for Yett's client has exactly
// one inventory row, whatever happened on the way.

// hydraEndpoints are h's endpoints with the token and revocation
// endpoints behind ctr (so the test sees every token Hydra issues).
func hydraEndpoints(h *hydratest.Hydra, ctr *hydratest.Counter) Endpoints {
	return Endpoints{
		Issuer: h.Issuer, AuthorizationEndpoint: h.PublicURL + "/oauth2/auth", TokenEndpoint: ctr.URL + "/oauth2/token",
		RevocationEndpoint: ctr.URL + "/oauth2/revoke", IntrospectionEndpoint: h.AdminURL + "/admin/oauth2/introspect",
	}
}

func codeRequest(name, client string, ep Endpoints) ConnectRequest {
	return ConnectRequest{
		Name: name, Provider: "custom", Flow: FlowAuthorizationCode, Endpoints: ep, ClientID: client, ClientAuth: ClientAuthNone,
		Scopes: []string{"openid", "offline_access"}, Unattended: true, Environment: "development", Owner: "alice", BackupRevoker: "bob",
	}
}

// browseFlow plays the person's browser for a waiting code flow and
// returns how the flow ended.
func browseFlow(t *testing.T, e *env, h *hydratest.Hydra, fv FlowView) FlowView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := h.Browse(ctx, fv.AuthorizationURL); err != nil {
		t.Fatalf("browse: %v", err)
	}
	done, err := e.m.WaitFlow(ctx, fv.ID)
	if err != nil {
		t.Fatal(err)
	}
	return done
}

// closedURL is an endpoint on a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/oauth2/revoke"
}

// holders says, for each token Hydra issued through ctr that Hydra still
// reports active, which rows hold it: sealed in service, or waiting in the
// revocation queue. Tokens are compared in memory only.
func holders(t *testing.T, e *env, h *hydratest.Hydra, ctr *hydratest.Counter) (active map[string][]string, held map[string]string) {
	t.Helper()
	held = map[string]string{} // token -> row id
	var rows []row
	if err := e.m.db.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r.SealedRefresh) > 0 {
			if v, err := e.vault.OpenBlob(purposeToken, tokenAD(r.ID, "refresh", r.Generation), r.SealedRefresh); err == nil {
				held[string(v)] = r.ID
			}
		}
		if len(r.SealedAccess) > 0 {
			if v, err := e.vault.OpenBlob(purposeToken, tokenAD(r.ID, "access", r.Generation), r.SealedAccess); err == nil {
				var sa sealedAccess
				if json.Unmarshal(v, &sa) == nil {
					held[sa.Value] = r.ID
				}
			}
		}
	}
	var qs []queued
	e.m.db.Raw(`SELECT id, authorization_id, token_type_hint, sealed_token FROM oauth_revocations`).Scan(&qs)
	for _, q := range qs {
		if v, err := e.vault.OpenBlob(purposeRevocation, tokenAD(q.ID, q.TokenTypeHint, 0), q.SealedToken); err == nil {
			held[string(v)] = q.AuthorizationID
		}
	}
	active = map[string][]string{}
	for _, is := range ctr.Issued() {
		if is.Hint != "refresh_token" || !h.Introspect(t, is.Value).Active {
			continue
		}
		if id, ok := held[is.Value]; ok {
			active[is.Value] = append(active[is.Value], id)
		} else {
			active[is.Value] = nil
		}
	}
	return active, held
}

// checkCustody is the property: every refresh token Hydra reports active
// for Yett's client is held by exactly one row that exists, and no row in
// service holds a refresh token Hydra reports inactive.
func checkCustody(t *testing.T, e *env, h *hydratest.Hydra, ctr *hydratest.Counter, after string) {
	t.Helper()
	active, held := holders(t, e, h, ctr)
	for tok, ids := range active {
		if len(ids) != 1 {
			t.Fatalf("after %s: a refresh token Hydra reports active is held by %d rows (%s)", after, len(ids), hydratest.HashToken(tok)[:12])
		}
		if ok, _ := e.m.AuthorizationExists(ids[0]); !ok {
			t.Fatalf("after %s: an active refresh token waits under a row that does not exist", after)
		}
	}
	views, err := e.m.Authorizations()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.State != StateActive && v.State != StateSuspended {
			continue
		}
		for tok, id := range held {
			if id != v.ID {
				continue
			}
			if _, live := active[tok]; !live && isRefresh(ctr, tok) {
				t.Fatalf("after %s: %q is %s but Hydra reports its refresh token inactive", after, v.Name, v.State)
			}
		}
	}
}

func isRefresh(ctr *hydratest.Counter, tok string) bool {
	for _, is := range ctr.Issued() {
		if is.Value == tok {
			return is.Hint == "refresh_token"
		}
	}
	return false
}

// rival is another Yett on e's data directory (the CLI while the app
// runs): take connects a client-credentials account at h under name.
func rival(t *testing.T, e *env, h *hydratest.Hydra) (take func(name string)) {
	t.Helper()
	const secret = "canary-secret-20b7"
	service := h.CreateClient(t, hydratest.ClientSpec{AuthMethod: "client_secret_basic", Secret: secret,
		GrantTypes: []string{"client_credentials"}, ResponseTypes: []string{"token"}, Scopes: []string{"tracker.read"}})
	other, err := Open(Config{DataDir: e.dir, Vault: e.vault, Audit: e.audit, Logger: newTestLogger(e.logs)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return func(name string) {
		t.Helper()
		if _, err := other.Connect(context.Background(), ConnectRequest{Name: name, Provider: "custom", Flow: FlowClientCredentials,
			Environment: "staging", Endpoints: Endpoints{Issuer: h.Issuer}, ClientID: service, ClientAuth: ClientAuthSecret,
			ClientSecret: []byte(secret), Scopes: []string{"tracker.read"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// Item 2: a name in use is refused before any browser opens, and so is a
// name a waiting connection holds.
func TestNameInUseRefusedBeforeTheBrowser(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	opened := 0
	e := newEnv(t, t.TempDir(), Config{OpenBrowser: func(string) { opened++ }})
	ep := hydraEndpoints(h, ctr)
	fv, err := e.m.Connect(context.Background(), codeRequest("tracker", client, ep))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Connect(context.Background(), codeRequest("tracker", client, ep)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "waiting") {
		t.Fatalf("a second connection under a waiting one's name: %v", err)
	}
	if done := browseFlow(t, e, h, fv); done.State != FlowConnected {
		t.Fatalf("the first connection: %+v", done)
	}
	if _, err := e.m.Connect(context.Background(), codeRequest("tracker", client, ep)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a connection under an existing name: %v", err)
	}
	if opened != 1 {
		t.Fatalf("the browser opened %d times, want once", opened)
	}
	checkCustody(t, e, h, ctr, "a refused name")
}

// Item 2: the name was free when the flow started, and another Yett (the
// CLI, on the same data directory) took it while the person signed in.
// The tokens the provider issued are revoked there, and the audit log
// says so; with the revocation endpoint down they stay under a row of
// their own until an endpoint that answers is set.
func TestConnectionFailingAfterTheExchangeLeavesNoGrant(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	e := newEnv(t, t.TempDir(), Config{RevokeRetry: 200 * time.Millisecond})
	takeName := rival(t, e, h)

	ep := hydraEndpoints(h, ctr)
	fv, err := e.m.Connect(context.Background(), codeRequest("tracker", client, ep))
	if err != nil {
		t.Fatal(err)
	}
	takeName("tracker")
	done := browseFlow(t, e, h, fv)
	if done.State != FlowFailed || !strings.Contains(done.Error, "revoked there") {
		t.Fatalf("the connection that lost its name: %+v", done)
	}
	issued := ctr.Issued()
	if len(issued) < 2 {
		t.Fatalf("Hydra issued %d tokens through the proxy", len(issued))
	}
	for _, is := range issued {
		if h.Introspect(t, is.Value).Active {
			t.Fatalf("Hydra still reports the failed connection's %s active", is.Hint)
		}
	}
	if views, _ := e.m.Authorizations(); len(views) != 1 || views[0].CreatedHow != FlowClientCredentials {
		t.Fatalf("rows after the failed connection: %+v", views)
	}
	revoked := 0
	for _, ev := range e.auditEvents() {
		if ev.Type == audit.EventAuthorizationRevoked && ev.OAuth.Step == StepConnectFailed && *ev.Success && ev.OAuth.AccountRef == "alice@example.test" {
			revoked++
		}
	}
	if revoked != 2 {
		t.Fatalf("%d audited revocations of the failed connection's tokens, want 2 (refresh and access)", revoked)
	}
	checkCustody(t, e, h, ctr, "a failed connection")

	// Again with the revocation endpoint down: the grant lives on at the
	// provider, so it keeps a row, disabled, whose tokens wait.
	ep.RevocationEndpoint = closedURL(t)
	fv, err = e.m.Connect(context.Background(), codeRequest("mail", client, ep))
	if err != nil {
		t.Fatal(err)
	}
	takeName("mail")
	done = browseFlow(t, e, h, fv)
	if done.State != FlowFailed || !strings.Contains(done.Error, "mail (failed connection)") {
		t.Fatalf("the connection that lost its name, revocation down: %+v", done)
	}
	checkCustody(t, e, h, ctr, "a failed connection whose revocation did not go through")
	var kept AuthorizationView
	views, _ := e.m.Authorizations()
	for _, v := range views {
		if v.Name == "mail (failed connection)" {
			kept = v
		}
	}
	if kept.State != StateDisabled || kept.Revocation != RevocationPending || kept.AccountRef != "alice@example.test" {
		t.Fatalf("the row that keeps the grant: %+v", kept)
	}
	// The person sets an endpoint that answers: the waiting tokens go.
	if err := e.m.SetEndpoints(context.Background(), kept.ID, ctr.URL+"/oauth2/revoke", h.AdminURL+"/admin/oauth2/introspect"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, _ := e.m.Authorization(kept.ID)
		if v.Revocation == RevocationDone && v.State == StateRevoked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiting tokens were not revoked: %+v", v)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, is := range ctr.Issued() {
		if is.Grant == "authorization_code" && h.Introspect(t, is.Value).Active {
			t.Fatalf("Hydra still reports a failed connection's %s active", is.Hint)
		}
	}
	checkCustody(t, e, h, ctr, "the endpoint was set")
	e.checkNoToken("canary-secret-20b7")
}

// Item 4: a provider whose introspection endpoint Yett does not know.
// Revocation is accepted and the refresh token's death verified by a
// refresh; the access token cannot be checked, and the row says
// "unverified", not "failed". Adding the endpoint later makes the next
// revocation verify it.
func TestRevocationWithoutIntrospectionIsUnverifiedNotFailed(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	e := newEnv(t, t.TempDir(), Config{})
	ep := hydraEndpoints(h, ctr)
	ep.IntrospectionEndpoint = ""
	fv, err := e.m.Connect(context.Background(), codeRequest("tracker", client, ep))
	if err != nil {
		t.Fatal(err)
	}
	if done := browseFlow(t, e, h, fv); done.State != FlowConnected {
		t.Fatalf("%+v", done)
	}
	rep, err := e.m.Revoke(context.Background(), done(fv, e))
	if err != nil {
		t.Fatal(err)
	}
	unverified := 0
	for _, s := range rep.Steps {
		if !s.OK {
			t.Errorf("step %s %s failed: %s", s.Step, s.TokenType, s.Detail)
		}
		if s.Unverified {
			unverified++
			if s.TokenType != "access_token" || !strings.Contains(s.Detail, "not verified") {
				t.Errorf("the unverified step: %+v", s)
			}
		}
	}
	if unverified != 1 {
		t.Fatalf("%d unverified steps, want 1 (the access token): %+v", unverified, rep.Steps)
	}
	v, _ := e.m.Authorization(rep.AuthorizationID)
	if v.State != StateRevoked || v.Revocation != RevocationUnverified {
		t.Fatalf("after the revocation: %s %s", v.State, v.Revocation)
	}
	checkCustody(t, e, h, ctr, "a revocation without introspection")
	for _, bad := range []string{"http://collector.example/introspect", "ftp://127.0.0.1/x", "https://user@idp.example/x"} {
		if err := e.m.SetEndpoints(context.Background(), v.ID, ep.RevocationEndpoint, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetEndpoints(%s): %v", bad, err)
		}
	}
	if err := e.m.SetEndpoints(context.Background(), v.ID, ep.RevocationEndpoint, h.AdminURL+"/admin/oauth2/introspect"); err != nil {
		t.Fatal(err)
	}
	edited := false
	for _, ev := range e.auditEvents() {
		edited = edited || ev.Type == audit.EventAuthorizationEdited && ev.AuthorizationID == v.ID && ev.OAuth.Step == StepEndpoints
	}
	if !edited {
		t.Fatal("the endpoint change is not in the audit log")
	}
	// Reconnected, and revoked again: now every step is verified.
	rf, err := e.m.Reconnect(context.Background(), v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := browseFlow(t, e, h, rf); d.State != FlowConnected || d.AuthorizationID != v.ID {
		t.Fatalf("reconnect: %+v", d)
	}
	checkCustody(t, e, h, ctr, "the reconnection")
	rep, err = e.m.Revoke(context.Background(), v.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Steps {
		if !s.OK || s.Unverified {
			t.Errorf("step %s %s after the endpoint was added: ok %v unverified %v", s.Step, s.TokenType, s.OK, s.Unverified)
		}
	}
	// The earlier unverified revocation is history; this one is verified.
	if v, _ := e.m.Authorization(v.ID); v.Revocation != RevocationDone {
		t.Fatalf("after the verified revocation: %s", v.Revocation)
	}
	checkCustody(t, e, h, ctr, "the second revocation")
}

func done(fv FlowView, e *env) string {
	v, _ := e.m.Flow(fv.ID)
	return v.AuthorizationID
}

// The property over the whole custody layer: after any sequence of
// connect, a connection failing after the exchange (its revocation
// reaching the provider or not), suspend, resume, revoke, reconnect and
// an endpoint set later, every refresh token Hydra reports active for
// Yett's client has exactly one row, and no row in service holds one
// Hydra reports inactive.
func TestCustodyPropertyEveryLiveGrantHasOneRow(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	e := newEnv(t, t.TempDir(), Config{RevokeRetry: 100 * time.Millisecond})
	takeName := rival(t, e, h)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 20))
	t.Logf("seed %d", seed)
	names := []string{"a", "b", "c", "d"}
	good := hydraEndpoints(h, ctr)
	down := good
	down.RevocationEndpoint = closedURL(t)
	pick := func(states ...string) (AuthorizationView, bool) {
		views, _ := e.m.Authorizations()
		var c []AuthorizationView
		for _, v := range views {
			for _, s := range states {
				if v.State == s && v.CreatedHow == FlowAuthorizationCode {
					c = append(c, v)
				}
			}
		}
		if len(c) == 0 {
			return AuthorizationView{}, false
		}
		return c[rng.IntN(len(c))], true
	}
	for i := range 24 {
		var did string
		switch rng.IntN(7) {
		case 0, 1:
			name := names[rng.IntN(len(names))]
			did = "connect " + name
			fv, err := e.m.Connect(context.Background(), codeRequest(name, client, good))
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatal(err)
				}
				break
			}
			browseFlow(t, e, h, fv)
		case 2:
			ep := good
			if rng.IntN(2) == 0 {
				ep = down
			}
			name := fmt.Sprintf("clash-%d", i)
			did = "a connection losing its name, revocation " + map[bool]string{true: "down", false: "up"}[ep == down]
			fv, err := e.m.Connect(context.Background(), codeRequest(name, client, ep))
			if err != nil {
				t.Fatal(err)
			}
			takeName(name)
			if d := browseFlow(t, e, h, fv); d.State != FlowFailed {
				t.Fatalf("%s: %+v", did, d)
			}
		case 3:
			if v, ok := pick(StateActive); ok {
				did = "suspend " + v.Name
				if err := e.m.Suspend(context.Background(), v.ID, "test"); err != nil {
					t.Fatal(err)
				}
			}
		case 4:
			if v, ok := pick(StateSuspended); ok {
				did = "resume " + v.Name
				if err := e.m.Resume(context.Background(), v.ID); err != nil {
					t.Fatal(err)
				}
			}
		case 5:
			if v, ok := pick(StateActive, StateSuspended, StateDisabled); ok {
				did = "revoke " + v.Name
				if _, err := e.m.Revoke(context.Background(), v.ID); err != nil {
					t.Fatal(err)
				}
			}
		case 6:
			if v, ok := pick(StateActive); ok && rng.IntN(3) == 0 {
				// Reconnecting one in service would leave its old grant
				// live with no row: refused.
				did = "reconnect " + v.Name + " while it serves"
				if _, err := e.m.Reconnect(context.Background(), v.ID); !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s: %v", did, err)
				}
				break
			}
			if v, ok := pick(StateRevoked, StateDisabled); ok {
				if v.Revocation == RevocationPending {
					did = "set the revocation endpoint of " + v.Name
					if err := e.m.SetEndpoints(context.Background(), v.ID, good.RevocationEndpoint, good.IntrospectionEndpoint); err != nil {
						t.Fatal(err)
					}
					break
				}
				did = "reconnect " + v.Name
				fv, err := e.m.Reconnect(context.Background(), v.ID)
				if err != nil {
					if !errors.Is(err, ErrInvalid) {
						t.Fatal(err)
					}
					break
				}
				browseFlow(t, e, h, fv)
			}
		}
		if did != "" {
			checkCustody(t, e, h, ctr, fmt.Sprintf("step %d, %s", i, did))
		}
	}
	e.checkNoToken("canary-secret-20b7")
}
