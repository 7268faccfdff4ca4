package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// resource is the API behind the named operations: it records the
// Authorization header's token (in memory only) so the test can introspect
// what Yett used.
type resource struct {
	*httptest.Server
	mu   sync.Mutex
	last string
	hits int
}

func newResource(t testing.TB) *resource {
	r := &resource{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.last = strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
		r.hits++
		r.mu.Unlock()
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *resource) lastToken() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// use performs one call with authorization id as the gateway does: acquire
// a lease, send with it, release.
func use(ctx context.Context, m *Custody, id, url string) error {
	l, err := m.Acquire(ctx, id, "test.op")
	if err != nil {
		return err
	}
	defer l.Release(true)
	var status int
	err = l.WithSecret(ctx, func(secret []byte) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+string(secret))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		status = resp.StatusCode
		return nil
	})
	if err == nil && status != 200 {
		return errors.New("resource refused the token")
	}
	return err
}

func TestHydraAuthorizationCodePKCERefreshAndRevoke(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{AccessTokenTTL: 3 * time.Second})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	e := newEnv(t, t.TempDir(), Config{RefreshMargin: 500 * time.Millisecond})
	id := connectCode(t, e, h, ctr.URL, ConnectRequest{ClientID: client, ClientAuth: ClientAuthNone,
		Scopes: []string{"openid", "offline_access"}, Unattended: true, Owner: "alice", BackupRevoker: "bob"})
	v, err := e.m.Authorization(id)
	if err != nil {
		t.Fatal(err)
	}
	if v.AccountRef != "alice@example.test" || v.State != StateActive || v.CreatedHow != FlowAuthorizationCode {
		t.Fatalf("inventory row: %+v", v)
	}
	if !strings.Contains(strings.Join(v.Scopes, " "), "offline_access") {
		t.Errorf("unattended connection did not ask for offline access: %v", v.Scopes)
	}
	res := newResource(t)
	if err := use(context.Background(), e.m, id, res.URL); err != nil {
		t.Fatal(err)
	}
	first := res.lastToken()
	if got := ctr.TokenRequests()["refresh_token"]; got != 0 {
		t.Fatalf("a fresh access token was refreshed anyway (%d requests)", got)
	}
	e.waitExpired(id)
	if err := use(context.Background(), e.m, id, res.URL); err != nil {
		t.Fatal(err)
	}
	second := res.lastToken()
	if second == first || ctr.TokenRequests()["refresh_token"] != 1 {
		t.Fatalf("expired access token not refreshed once (%d refresh requests)", ctr.TokenRequests()["refresh_token"])
	}
	if !h.Introspect(t, second).Active {
		t.Fatal("the refreshed access token is not active")
	}
	// The refreshed state survives a restart: a new manager on the same
	// directory uses what was stored (no token request).
	e.m.Close()
	e.m, err = Open(Config{DataDir: e.dir, Vault: e.vault, Audit: e.audit, Logger: newTestLogger(e.logs), RefreshMargin: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := use(context.Background(), e.m, id, res.URL); err != nil {
		t.Fatal(err)
	}
	if ctr.TokenRequests()["refresh_token"] != 1 {
		t.Fatal("a restart refreshed although the stored access token was fresh")
	}

	// One-click revoke: local first, then RFC 7009, then introspection.
	before := ctr.TokenRequests()
	rep, err := e.m.Revoke(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) < 3 || rep.Steps[0].Step != StepLocalDisable || rep.RetryPending {
		t.Fatalf("revoke report: %+v", rep)
	}
	for _, s := range rep.Steps {
		if !s.OK {
			t.Errorf("revoke step %s failed: %s", s.Step, s.Detail)
		}
	}
	if h.Introspect(t, second).Active {
		t.Error("Hydra still reports the access token active after revocation")
	}
	v, _ = e.m.Authorization(id)
	if v.State != StateRevoked || v.Revocation != RevocationDone {
		t.Errorf("after revoke: state %s revocation %s", v.State, v.Revocation)
	}
	// The next use is refused locally, with no request to the provider.
	hits := res.hits
	if err := use(context.Background(), e.m, id, res.URL); !errors.Is(err, ErrDisabled) {
		t.Fatalf("use after revoke: %v", err)
	}
	after := ctr.TokenRequests()
	if after["refresh_token"] != before["refresh_token"] || after["authorization_code"] != before["authorization_code"] || res.hits != hits {
		t.Error("a call after revocation reached the network")
	}
	types := map[audit.EventType]int{}
	for _, ev := range e.auditEvents() {
		types[ev.Type]++
	}
	for _, want := range []audit.EventType{audit.EventAuthorizationConnected, audit.EventTokenRefreshed, audit.EventAuthorizationDisabled, audit.EventAuthorizationRevoked} {
		if types[want] == 0 {
			t.Errorf("no %s event in the audit log", want)
		}
	}
	e.checkNoToken(first, second)
}

// TestHydraRefreshTokenRevokedVerified checks the provider side of the
// revocation with the refresh token itself: Yett's verification step and
// Hydra's introspection agree it is inactive. The refresh token is read
// from the store only in this test of the package's own internals.
func TestHydraRevocationInactivatesRefreshToken(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	client := hydraPublicClient(t, h)
	e := newEnv(t, t.TempDir(), Config{})
	id := connectCode(t, e, h, h.PublicURL, ConnectRequest{ClientID: client, ClientAuth: ClientAuthNone, Scopes: []string{"offline_access"}, Unattended: true, Owner: "alice", BackupRevoker: "bob"})
	r, _ := loadRow(e.m.db, id)
	rt, err := e.vault.OpenBlob(purposeToken, tokenAD(id, "refresh", r.Generation), r.SealedRefresh)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Introspect(t, string(rt)).Active {
		t.Fatal("the stored refresh token is not active before revocation")
	}
	if _, err := e.m.Revoke(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if h.Introspect(t, string(rt)).Active {
		t.Error("Hydra reports the refresh token active after the one-click revoke")
	}
	r, _ = loadRow(e.m.db, id)
	if len(r.SealedRefresh) != 0 || len(r.SealedAccess) != 0 {
		t.Error("tokens are still stored after revocation")
	}
	var queued int
	e.m.db.Raw(`SELECT count(*) FROM oauth_revocations`).Scan(&queued)
	if queued != 0 {
		t.Error("revoked tokens were left in the revocation queue")
	}
	e.checkNoToken(string(rt))
}

func TestHydraClientCredentialsAndPrivateKeyJWT(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	e := newEnv(t, t.TempDir(), Config{})
	secretClient := h.CreateClient(t, hydratest.ClientSpec{AuthMethod: "client_secret_basic", Secret: "canary-client-secret-5f1c",
		GrantTypes: []string{"client_credentials"}, ResponseTypes: []string{"token"}, Scopes: []string{"tracker.read"}})
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "service", Provider: "custom", Flow: FlowClientCredentials, Environment: "staging",
		Endpoints: Endpoints{Issuer: h.Issuer}, ClientID: secretClient, ClientAuth: ClientAuthSecret,
		ClientSecret: []byte("canary-client-secret-5f1c"), Scopes: []string{"tracker.read"}, Owner: "ops",
	})
	if err != nil || fv.State != FlowConnected {
		t.Fatalf("client credentials with a secret (discovered endpoints): %+v %v", fv, err)
	}
	res := newResource(t)
	if err := use(context.Background(), e.m, fv.AuthorizationID, res.URL); err != nil {
		t.Fatal(err)
	}
	if !h.Introspect(t, res.lastToken()).Active {
		t.Fatal("client credentials token inactive")
	}
	// Who answers for it is declared for the owner inventory to take
	// over, as it was declared (no backup revoker).
	if d, err := e.m.Declarations(); err != nil || d[fv.AuthorizationID].Owner != "ops" || d[fv.AuthorizationID].BackupRevoker != "" {
		t.Errorf("the declaration at connection: %+v %v", d[fv.AuthorizationID], err)
	}

	key, err := e.m.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(key.JWKS, `"d"`) {
		t.Fatal("the JWKS to register holds the private key")
	}
	jwtClient := h.CreateClient(t, hydratest.ClientSpec{AuthMethod: "private_key_jwt", JWKS: []byte(key.JWKS), SigningAlg: "ES256",
		GrantTypes: []string{"client_credentials"}, ResponseTypes: []string{"token"}, Scopes: []string{"tracker.read"}})
	fv, err = e.m.Connect(context.Background(), ConnectRequest{
		Name: "service-jwt", Provider: "custom", Flow: FlowClientCredentials, Environment: "production",
		Endpoints: Endpoints{TokenEndpoint: h.PublicURL + "/oauth2/token", Issuer: h.Issuer}, ClientID: jwtClient,
		ClientAuth: ClientAuthPrivateKeyJWT, ClientKeyID: key.ID, Scopes: []string{"tracker.read"}, Owner: "ops", BackupRevoker: "sec",
	})
	if err != nil || fv.State != FlowConnected {
		t.Fatalf("client credentials with private_key_jwt: %+v %v", fv, err)
	}
	if err := use(context.Background(), e.m, fv.AuthorizationID, res.URL); err != nil {
		t.Fatal(err)
	}
	if !h.Introspect(t, res.lastToken()).Active {
		t.Fatal("private_key_jwt token inactive")
	}
	e.checkNoToken("canary-client-secret-5f1c", res.lastToken())
}

// The kill -9 test: a separate process refreshes and is killed after Hydra
// answered (rotated) and before Yett stored the answer. Afterwards the
// superseded refresh token is never presented again, and the authorization
// says it needs reconnection.
func TestHydraKilledBetweenTokenResponseAndStore(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{AccessTokenTTL: 3 * time.Second})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	dir := t.TempDir()
	e := newEnv(t, dir, Config{RefreshMargin: 200 * time.Millisecond})
	id := connectCode(t, e, h, ctr.URL, ConnectRequest{ClientID: client, ClientAuth: ClientAuthNone, Scopes: []string{"offline_access"}, Unattended: true, Owner: "a", BackupRevoker: "b"})
	e.waitExpired(id)
	e.close()

	killed := make(chan struct{})
	var once sync.Once
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRefreshProcess$", "-test.v")
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "YETT_OAUTH_HELPER_DIR="+dir, "YETT_OAUTH_HELPER_ID="+id, "DBUS_SESSION_BUS_ADDRESS=disabled:")
	proc := make(chan *os.Process, 1)
	ctr.SetResponseHook(func(grant string, status int) {
		if grant != "refresh_token" {
			return
		}
		once.Do(func() {
			p := <-proc
			p.Kill() // SIGKILL, while Hydra's answer is on its way
			close(killed)
		})
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	proc <- cmd.Process
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper never reached the token endpoint:\n%s", out.String())
	}
	cmd.Wait()
	ctr.SetResponseHook(nil)
	presented := ctr.RefreshTokensPresented()
	if len(presented) != 1 {
		t.Fatalf("%d refresh tokens presented before the kill", len(presented))
	}

	e2 := newEnv(t, dir, Config{RefreshMargin: 200 * time.Millisecond})
	err := use(context.Background(), e2.m, id, "http://127.0.0.1:1/")
	if !errors.Is(err, ErrNeedsReconnection) {
		t.Fatalf("after the kill: %v", err)
	}
	v, _ := e2.m.Authorization(id)
	if v.State != StateNeedsReconnection || v.StateReason != "response_lost" {
		t.Errorf("state %s (%s)", v.State, v.StateReason)
	}
	if got := ctr.RefreshTokensPresented(); len(got) != 1 {
		t.Errorf("the superseded refresh token was presented again (%d presentations)", len(got))
	}
	found := false
	for _, ev := range e2.auditEvents() {
		if ev.Type == audit.EventTokenRefreshed && ev.OAuth != nil && ev.OAuth.ErrorCode == "response_lost" {
			found = true
		}
	}
	if !found {
		t.Error("needs-reconnection after a lost response is not audited")
	}
}

// TestHelperRefreshProcess is the process the kill test kills; it does
// nothing in a normal run.
func TestHelperRefreshProcess(t *testing.T) {
	dir := os.Getenv("YETT_OAUTH_HELPER_DIR")
	if dir == "" {
		return
	}
	e := newEnv(t, dir, Config{RefreshMargin: 200 * time.Millisecond})
	err := use(context.Background(), e.m, os.Getenv("YETT_OAUTH_HELPER_ID"), "http://127.0.0.1:1/")
	t.Logf("helper use: %v", err)
	time.Sleep(5 * time.Second) // killed before this ends
}

// Revoking while a refresh is on the wire: the local disable does not wait
// for the network, and the tokens the refresh brings back never go into
// service; they are revoked at the provider too.
func TestHydraRevokeDuringRefresh(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{AccessTokenTTL: 3 * time.Second})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	e := newEnv(t, t.TempDir(), Config{RefreshMargin: 200 * time.Millisecond, RevokeRetry: 100 * time.Millisecond})
	id := connectCode(t, e, h, ctr.URL, ConnectRequest{ClientID: client, ClientAuth: ClientAuthNone, Scopes: []string{"offline_access"}, Unattended: true, Owner: "a", BackupRevoker: "b"})
	e.waitExpired(id)
	inHook, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ctr.SetHook(func(grant string) {
		if grant == "refresh_token" {
			once.Do(func() { close(inHook) })
			<-release
		}
	})
	acquired := make(chan error, 1)
	go func() {
		_, err := e.m.Acquire(context.Background(), id, "test.op")
		acquired <- err
	}()
	<-inHook
	// The refresh is held at the provider's door. Revoke now: the local
	// step must complete without it.
	disabled := make(chan struct{})
	go func() {
		e.m.revoker.disable(context.Background(), id)
		close(disabled)
	}()
	select {
	case <-disabled:
	case <-time.After(10 * time.Second):
		t.Fatal("the local disable waited for the refresh on the wire")
	}
	close(release)
	err := <-acquired
	if err == nil {
		t.Fatal("a refresh that raced the revoke put a token into service")
	}
	// Hydra on SQLite sometimes answers a refresh "invalid_request: Failed
	// to refresh token. Please retry" when its database is busy; then no
	// new token exists and there is nothing more to check on that side.
	orphaned := errors.Is(err, ErrDisabled)
	if !orphaned && !errors.Is(err, ErrProvider) {
		t.Fatalf("the refresh that raced the revoke returned %v", err)
	}
	r, _ := loadRow(e.m.db, id)
	e.m.revoker.revokeQueued(context.Background(), r, true)
	deadline := time.Now().Add(20 * time.Second)
	var left int
	for time.Now().Before(deadline) {
		e.m.db.Raw(`SELECT count(*) FROM oauth_revocations`).Scan(&left)
		if left == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if left != 0 {
		t.Fatal("the tokens the racing refresh brought back were not revoked")
	}
	if v, _ := e.m.Authorization(id); v.State != StateRevoked {
		t.Errorf("state after the race: %s", v.State)
	}
	found := false
	for _, ev := range e.auditEvents() {
		if ev.OAuth != nil && ev.OAuth.ErrorCode == "revoked_meanwhile" {
			found = true
		}
	}
	if orphaned && !found {
		t.Error("the orphaned refresh is not audited")
	}
}
