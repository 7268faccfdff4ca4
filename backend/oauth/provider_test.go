package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// Device flow (RFC 8628) and DPoP (RFC 9449) run against the small test
// provider in oauthtest: Hydra v2.3.0 supports neither.
func TestDeviceFlowWithDPoPAndNonces(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{RequireDPoP: true, DPoPNonce: true, AccessTTL: 2 * time.Second, DeviceInterval: time.Second})
	e := newEnv(t, t.TempDir(), Config{RefreshMargin: 500 * time.Millisecond})
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "device", Provider: "custom", Flow: FlowDeviceCode, Environment: "production", Endpoints: Endpoints{Issuer: p.URL},
		ClientID: "yett-test", ClientAuth: ClientAuthNone, Scopes: []string{"read"}, Unattended: true, DPoP: true,
		Owner: "alice", BackupRevoker: "bob",
	})
	if err != nil {
		t.Fatal(err)
	}
	if fv.UserCode == "" || fv.VerificationURI == "" || fv.State != FlowWaiting {
		t.Fatalf("device flow view: %+v", fv)
	}
	if err := p.ApproveDevice(fv.UserCode); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done, err := e.m.WaitFlow(ctx, fv.ID)
	if err != nil || done.State != FlowConnected {
		t.Fatalf("device flow: %+v %v", done, err)
	}
	id := done.AuthorizationID
	exec := action.New(action.Config{})
	call := func() *action.Response {
		t.Helper()
		l, err := e.m.Acquire(ctx, id, "test.dpop")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(true)
		cred := l.Credential()
		if cred.Injection.Format != action.InjectDPoP {
			t.Fatalf("a DPoP authorization is injected as %s", cred.Injection.Format)
		}
		resp, err := exec.Do(ctx, action.Request{Method: "GET", URL: p.URL + "/resource"}, cred)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := call()
	if resp.Status != 200 || !strings.Contains(string(resp.Body), `"dpop":true`) {
		t.Fatalf("resource with a DPoP-bound token: %d %s", resp.Status, resp.Body)
	}
	e.waitExpired(id) // the refresh carries a proof too
	if resp := call(); resp.Status != 200 {
		t.Fatalf("resource after the DPoP refresh: %d", resp.Status)
	}
	if got := p.TokenRequests()["refresh_token"]; got != 1 {
		t.Fatalf("%d refresh requests, want 1", got)
	}
	rep, err := e.m.Revoke(ctx, id)
	if err != nil || rep.RetryPending {
		t.Fatalf("revoke: %+v %v", rep, err)
	}
	for _, s := range rep.Steps {
		if !s.OK {
			t.Errorf("revoke step %s: %s", s.Step, s.Detail)
		}
	}
	if _, err := e.m.Acquire(ctx, id, "test.dpop"); err == nil {
		t.Fatal("a revoked authorization still lends a token")
	}
}

func TestDeviceFlowDenied(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{DeviceInterval: time.Second})
	e := newEnv(t, t.TempDir(), Config{})
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "device", Provider: "custom", Flow: FlowDeviceCode, Environment: "staging", Endpoints: Endpoints{Issuer: p.URL},
		ClientID: "yett-test", ClientAuth: ClientAuthNone, Scopes: []string{"read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.DenyDevice(fv.UserCode)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done, _ := e.m.WaitFlow(ctx, fv.ID)
	if done.State != FlowFailed || !strings.Contains(done.Error, "access_denied") {
		t.Fatalf("denied device flow: %+v", done)
	}
	if views, _ := e.m.Authorizations(); len(views) != 0 {
		t.Fatal("a denied flow left an authorization")
	}
}

// A provider that is down when the person revokes: the local disable
// happens at once, the provider step is retried durably, and completes
// once the provider answers again (here: after a restart of the manager).
func TestRevokeRetriesWhenProviderDown(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: "canary-secret-77aa"})
	dir := t.TempDir()
	e := newEnv(t, dir, Config{RevokeRetry: 200 * time.Millisecond})
	id := connectService(t, e, p, "http://127.0.0.1:1/revoke", "canary-secret-77aa")
	rep, err := e.m.Revoke(context.Background(), id)
	if err != nil || !rep.RetryPending || rep.Steps[0].Step != StepLocalDisable || !rep.Steps[0].OK {
		t.Fatalf("revoke with the provider down: %+v %v", rep, err)
	}
	if _, err := e.m.Acquire(context.Background(), id, "x.y"); err == nil {
		t.Fatal("operations still served while the provider revocation is pending")
	}
	v, _ := e.m.Authorization(id)
	if v.State != StateDisabled || v.Revocation != RevocationPending {
		t.Fatalf("pending revocation: %s %s", v.State, v.Revocation)
	}
	// The endpoint comes back (the person fixed it, or the outage ended).
	e.m.db.Exec(`UPDATE oauth_authorizations SET revocation_endpoint = ? WHERE id = ?`, p.URL+"/revoke", id)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if v, _ = e.m.Authorization(id); v.State == StateRevoked {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v.State != StateRevoked || v.Revocation != RevocationDone {
		t.Fatalf("the retry did not finish the revocation: %s %s", v.State, v.Revocation)
	}
	e.checkNoToken("canary-secret-77aa")
}

// The person's Revoke and the retry loop must not race for the same queued
// tokens. The CI run of the e2e suite once showed a finished revocation
// turned to "failed": the loop had picked the authorization up while the
// person's call was sending its tokens, then found the queue empty.
func TestRetryLoopLeavesThePersonsRevocationAlone(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: "canary-secret-91bc"})
	e := newEnv(t, t.TempDir(), Config{RevokeRetry: time.Hour})
	id := connectService(t, e, p, p.URL+"/revoke", "canary-secret-91bc")

	// The local step queues the tokens for the person's own call, not for
	// the loop: none is due before the first retry delay.
	r, err := e.m.revoker.disable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var queuedN, due int64
	e.m.db.Raw(`SELECT COUNT(*) FROM oauth_revocations WHERE authorization_id = ?`, id).Scan(&queuedN)
	e.m.db.Raw(`SELECT COUNT(*) FROM oauth_revocations WHERE authorization_id = ? AND next_attempt <= ?`, id, time.Now().Unix()).Scan(&due)
	if queuedN == 0 || due != 0 {
		t.Fatalf("after the local disable: %d queued, %d due for the loop; want some queued, none due", queuedN, due)
	}
	// A loop that arrives early sends nothing and changes nothing.
	if steps, pending := e.m.revoker.revokeQueued(context.Background(), r, false); len(steps) != 0 || pending {
		t.Fatalf("the loop acted on tokens that were not due: %+v %v", steps, pending)
	}
	if v, _ := e.m.Authorization(id); v.State != StateDisabled || v.Revocation != RevocationPending {
		t.Fatalf("after an early loop pass: %s %s", v.State, v.Revocation)
	}

	// The person's call sends every queued token and finishes the revocation.
	steps, pending := e.m.revoker.revokeQueued(context.Background(), r, true)
	if pending || len(steps) == 0 {
		t.Fatalf("the person's call: %+v pending=%v", steps, pending)
	}
	for _, s := range steps {
		if !s.OK {
			t.Fatalf("step %s failed: %s", s.Step, s.Detail)
		}
	}
	// A loop pass that looked before the person's call and arrives after
	// it finds nothing left and keeps the outcome.
	e.m.revoker.revokeQueued(context.Background(), r, false)
	if v, _ := e.m.Authorization(id); v.State != StateRevoked || v.Revocation != RevocationDone {
		t.Fatalf("a late loop pass changed the finished revocation: %s %s", v.State, v.Revocation)
	}
	e.checkNoToken("canary-secret-91bc")
}

// A token the provider refuses to revoke makes the revocation a manual step
// at once, even while other tokens of the authorization wait for their
// retry; and a later successful revocation does not hide that failure.
func TestRevocationFailureStands(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: "canary-secret-3d4e"})
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"unsupported_token_type"}`))
	}))
	t.Cleanup(refusing.Close)
	e := newEnv(t, t.TempDir(), Config{RevokeRetry: time.Hour})
	id := connectService(t, e, p, refusing.URL, "canary-secret-3d4e")
	r, err := e.m.revoker.disable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	// A second token (as a refresh that raced the revoke would leave) that
	// is not due yet; the disable's own token is made due now.
	if err := e.m.revoker.queueToken(e.m.db, id, "refresh_token", []byte("late-token"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.m.db.Exec(`UPDATE oauth_revocations SET next_attempt = 0 WHERE token_type_hint = 'access_token'`)
	e.m.revoker.revokeQueued(context.Background(), r, false)
	var left int64
	e.m.db.Raw(`SELECT COUNT(*) FROM oauth_revocations WHERE authorization_id = ?`, id).Scan(&left)
	if v, _ := e.m.Authorization(id); v.State != StateRevoked || v.Revocation != RevocationFailed || left != 1 {
		t.Fatalf("after the provider refused one token: %s %s, %d left in the queue; want revoked, failed, 1", v.State, v.Revocation, left)
	}
	// The provider now accepts the remaining token: the row stays failed.
	e.m.db.Exec(`UPDATE oauth_authorizations SET revocation_endpoint = ? WHERE id = ?`, p.URL+"/revoke", id)
	e.m.db.Exec(`UPDATE oauth_revocations SET next_attempt = 0`)
	r, _ = loadRow(e.m.db, id)
	e.m.revoker.revokeQueued(context.Background(), r, false)
	e.m.db.Raw(`SELECT COUNT(*) FROM oauth_revocations WHERE authorization_id = ?`, id).Scan(&left)
	if v, _ := e.m.Authorization(id); v.Revocation != RevocationFailed || left != 0 {
		t.Fatalf("a later revocation hid the failure: %s, %d left", v.Revocation, left)
	}
	e.checkNoToken("canary-secret-3d4e")
}

// connectService connects a client-credentials authorization at p with the
// given revocation endpoint, and returns its id.
func connectService(t *testing.T, e *env, p *oauthtest.Provider, revocationEndpoint, secret string) string {
	t.Helper()
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "svc", Provider: "custom", Flow: FlowClientCredentials, Environment: "production",
		Endpoints: Endpoints{TokenEndpoint: p.URL + "/token", RevocationEndpoint: revocationEndpoint, IntrospectionEndpoint: p.URL + "/introspect"},
		ClientID:  "yett-test", ClientAuth: ClientAuthSecret, ClientSecret: []byte(secret), Owner: "o", BackupRevoker: "b",
	})
	if err != nil {
		t.Fatal(err)
	}
	return fv.AuthorizationID
}
