package oauth

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

const testPassphrase = "correct horse battery staple"

// env is one data directory with a vault, an audit log and a manager, as
// the app or `yett serve` would have them.
type env struct {
	t        testing.TB
	dir      string
	vault    *vault.Vault
	audit    *audit.Log
	identity *age.X25519Identity
	m        *Custody
	logs     *syncbuf.Buffer
}

// newEnv creates a vault in dir (or opens and unlocks the one there).
func newEnv(t testing.TB, dir string, cfg Config) *env {
	t.Helper()
	e := &env{t: t, dir: dir, logs: &syncbuf.Buffer{}}
	v, err := vault.Open(filepath.Join(dir, "vault"), vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	e.vault = v
	if v.Status().State == vault.StateUninitialised {
		if err := v.Create(vault.Passphrase(testPassphrase), false); err != nil {
			t.Fatal(err)
		}
	} else if err := v.Unlock(vault.Passphrase(testPassphrase)); err != nil {
		t.Fatal(err)
	}
	id, err := v.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	e.identity = id
	if e.audit, _, err = audit.Open(audit.Options{Dir: filepath.Join(dir, "audit"), Recipient: id.Recipient()}); err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.Vault, cfg.Audit = dir, v, e.audit
	cfg.Logger = newTestLogger(e.logs)
	if e.m, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	return e
}

func (e *env) close() {
	if e.m != nil {
		e.m.Close()
		e.m = nil
	}
	if e.audit != nil {
		e.audit.Close()
		e.audit = nil
	}
	if e.vault != nil {
		e.vault.Close()
		e.vault = nil
	}
}

// auditText decrypts the whole audit log (for canary checks and reading
// events).
func (e *env) auditEvents() []audit.Event {
	e.t.Helper()
	var evs []audit.Event
	for en, err := range audit.ReadEvents(filepath.Join(e.dir, "audit", audit.LogFile), e.identity) {
		if err != nil {
			e.t.Fatal(err)
		}
		evs = append(evs, en.Event)
	}
	return evs
}

// checkNoToken fails when any of the given token values shows up in the
// logs, the audit log (decrypted), any file of the data directory, or the
// views the UI gets.
func (e *env) checkNoToken(tokens ...string) {
	e.t.Helper()
	var hay []string
	hay = append(hay, e.logs.String())
	for _, ev := range e.auditEvents() {
		hay = append(hay, fmtEvent(ev))
	}
	filepath.Walk(e.dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			hay = append(hay, string(b))
		}
		return nil
	})
	if e.m != nil {
		views, _ := e.m.Authorizations()
		hay = append(hay, fmtAny(views))
	}
	for _, tok := range tokens {
		if len(tok) < 8 {
			e.t.Fatal("canary check given an empty or short token")
		}
		for _, h := range hay {
			if strings.Contains(h, tok) {
				e.t.Error("a token value appears in logs, audit, files or UI data")
				return
			}
		}
	}
}

// hydraClient registers a public PKCE client on h.
func hydraPublicClient(t testing.TB, h *hydratest.Hydra) string {
	return h.CreateClient(t, hydratest.ClientSpec{
		AuthMethod: "none", RedirectURIs: []string{"http://127.0.0.1/callback"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, Scopes: []string{"openid", "offline_access", "offline"},
	})
}

// connectCode connects an authorization through the real loopback callback:
// Browse plays the person's browser (login and consent accepted through
// Hydra's admin API).
func connectCode(t testing.TB, e *env, h *hydratest.Hydra, tokenBase string, req ConnectRequest) string {
	t.Helper()
	if req.Name == "" {
		req.Name = "tracker"
	}
	req.Provider, req.Flow = "custom", FlowAuthorizationCode
	req.Endpoints = Endpoints{
		Issuer: h.Issuer, AuthorizationEndpoint: h.PublicURL + "/oauth2/auth", TokenEndpoint: tokenBase + "/oauth2/token",
		RevocationEndpoint: tokenBase + "/oauth2/revoke", IntrospectionEndpoint: h.AdminURL + "/admin/oauth2/introspect",
	}
	if req.Environment == "" {
		req.Environment = "development"
	}
	fv, err := e.m.Connect(context.Background(), req)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if fv.AuthorizationURL == "" || !strings.Contains(fv.AuthorizationURL, "code_challenge_method=S256") {
		t.Fatal("the authorization URL does not carry a PKCE S256 challenge")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	status, final, err := h.Browse(ctx, fv.AuthorizationURL)
	if err != nil || status != 200 || !strings.HasPrefix(final, "http://127.0.0.1:") {
		t.Fatalf("browse: status %d final %q err %v", status, final, err)
	}
	done, err := e.m.WaitFlow(ctx, fv.ID)
	if err != nil || done.State != FlowConnected {
		t.Fatalf("flow: %+v %v", done, err)
	}
	return done.AuthorizationID
}

func fmtEvent(ev audit.Event) string { return fmtAny(ev) }

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitExpired waits until the stored access token of id is due for a
// refresh (its expiry minus the manager's margin has passed), so tests do
// not depend on how the provider rounds expires_in.
func (e *env) waitExpired(id string) {
	e.t.Helper()
	r, err := loadRow(e.m.db, id)
	if err != nil {
		e.t.Fatal(err)
	}
	tok, err := e.m.tokens.openAccess(r)
	if err != nil {
		e.t.Fatal(err)
	}
	if tok.expiry.IsZero() {
		e.t.Fatal("the provider's access token has no expiry (expires_in missing or 0): the test's TTL is too short to be rounded")
	}
	deadline := time.Now().Add(time.Minute)
	for e.m.tokens.fresh(tok) {
		if time.Now().After(deadline) {
			e.t.Fatal("the access token did not come due within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
