package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

func metadataServer(t *testing.T, scopes []string) string {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": srv.URL, "authorization_endpoint": srv.URL + "/auth", "token_endpoint": srv.URL + "/token",
			"scopes_supported": scopes,
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestOfflineAccessOnlyWhereListed(t *testing.T) {
	e := newEnv(t, t.TempDir(), Config{})
	for _, c := range []struct {
		listed     []string
		unattended bool
		want       bool
	}{
		{[]string{"openid", "offline_access"}, true, true},
		{[]string{"openid", "offline_access"}, false, false},
		{[]string{"read", "write"}, true, false},
		{nil, true, false},
	} {
		iss := metadataServer(t, c.listed)
		r, err := e.m.connector.newRow(context.Background(), ConnectRequest{Name: "x", Provider: "custom", Flow: FlowAuthorizationCode,
			Environment: "development", Endpoints: Endpoints{Issuer: iss}, ClientID: "c", ClientAuth: ClientAuthNone,
			Scopes: []string{"openid"}, Unattended: c.unattended})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(r.RequestedScopes, "offline_access"); got != c.want {
			t.Errorf("listed %v unattended %v: offline_access requested = %v", c.listed, c.unattended, got)
		}
	}
}

func TestConnectRefusesBadRequests(t *testing.T) {
	e := newEnv(t, t.TempDir(), Config{})
	good := ConnectRequest{Name: "x", Provider: "custom", Flow: FlowAuthorizationCode, Environment: "development",
		Endpoints: Endpoints{AuthorizationEndpoint: "https://p.example/auth", TokenEndpoint: "https://p.example/token"},
		ClientID:  "c", ClientAuth: ClientAuthNone}
	if _, err := e.m.connector.newRow(context.Background(), good); err != nil {
		t.Fatalf("the good request is refused: %v", err)
	}
	for name, mut := range map[string]func(*ConnectRequest){
		"no name":               func(r *ConnectRequest) { r.Name = " " },
		"multi-line name":       func(r *ConnectRequest) { r.Name = "a\nb" },
		"no environment":        func(r *ConnectRequest) { r.Environment = "" },
		"unknown environment":   func(r *ConnectRequest) { r.Environment = "prod-ish" },
		"password grant":        func(r *ConnectRequest) { r.Flow = "password" },
		"no client id":          func(r *ConnectRequest) { r.ClientID = "" },
		"http endpoint":         func(r *ConnectRequest) { r.Endpoints.TokenEndpoint = "http://p.example/token" },
		"no token endpoint":     func(r *ConnectRequest) { r.Endpoints.TokenEndpoint = "" },
		"scope with a quote":    func(r *ConnectRequest) { r.Scopes = []string{`a"b`} },
		"public client secret":  func(r *ConnectRequest) { r.ClientSecret = []byte("s3cret-canary") },
		"secret auth no secret": func(r *ConnectRequest) { r.ClientAuth = ClientAuthSecret },
		"unknown key":           func(r *ConnectRequest) { r.ClientAuth, r.ClientKeyID = ClientAuthPrivateKeyJWT, "ck-none" },
		"cc without auth":       func(r *ConnectRequest) { r.Flow = FlowClientCredentials },
		"device w/o endpoint":   func(r *ConnectRequest) { r.Flow = FlowDeviceCode },
		"unknown preset":        func(r *ConnectRequest) { r.Provider = "myspace" },
		"microsoft bad tenant":  func(r *ConnectRequest) { r.Provider, r.Tenant = "microsoft", "not a tenant!" },
		"API host with scheme":  func(r *ConnectRequest) { r.APIHosts = []string{"https://api.p.example"} },
		"API host any name":     func(r *ConnectRequest) { r.APIHosts = []string{"*"} },
		"API host with a path":  func(r *ConnectRequest) { r.APIHosts = []string{"api.p.example/v1"} },
		"API host wildcard mid": func(r *ConnectRequest) { r.APIHosts = []string{"api.*.example"} },
		"too many API hosts":    func(r *ConnectRequest) { r.APIHosts = make([]string, maxAPIHosts+1) },
	} {
		r := good
		mut(&r)
		_, err := e.m.connector.newRow(context.Background(), r)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-canary") {
			t.Errorf("%s: the error echoes the secret", name)
		}
	}
}

// An authorization's tokens go only to its API: the hosts the person
// declared, else the preset's, else the provider's own issuer and token
// hosts. The view shows the list the gateway checks.
func TestAPIHostsOfAnAuthorization(t *testing.T) {
	e := newEnv(t, t.TempDir(), Config{})
	custom := ConnectRequest{Name: "x", Provider: "custom", Flow: FlowAuthorizationCode, Environment: "development",
		Endpoints: Endpoints{Issuer: "https://id.p.example", AuthorizationEndpoint: "https://id.p.example/auth", TokenEndpoint: "https://token.p.example/token"},
		ClientID:  "c", ClientAuth: ClientAuthNone}
	declared := custom
	declared.APIHosts = []string{" API.P.example ", "*.files.p.example", "api.p.example", ""}
	github := ConnectRequest{Name: "gh", Provider: "github", Flow: FlowAuthorizationCode, Environment: "development", ClientID: "c", ClientAuth: ClientAuthNone}
	for name, c := range map[string]struct {
		req  ConnectRequest
		want string
	}{
		"custom provider": {custom, "id.p.example token.p.example"},
		"declared":        {declared, "api.p.example *.files.p.example"},
		"preset":          {github, "api.github.com uploads.github.com"},
	} {
		r, err := e.m.connector.newRow(context.Background(), c.req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, h := range apiHostsOf(r) {
			got = append(got, string(h))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: API hosts %q, want %q", name, got, c.want)
		}
		if v := e.m.view(r); strings.Join(v.APIHosts, " ") != c.want {
			t.Errorf("%s: the view shows %q, want %q", name, v.APIHosts, c.want)
		}
	}
}

// After a vault reset the sealed tokens are unreadable for good: the rows
// stay, marked needs_reconnection (vault_reset), with nothing sealed left.
func TestVaultResetMarksAuthorizationsForReconnection(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: "canary-secret-reset"})
	dir := t.TempDir()
	e := newEnv(t, dir, Config{})
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "svc", Provider: "custom", Flow: FlowClientCredentials, Environment: "production",
		Endpoints: Endpoints{Issuer: p.URL}, ClientID: "yett-test", ClientAuth: ClientAuthSecret, ClientSecret: []byte("canary-secret-reset"),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.m.Close()
	if err := e.vault.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := e.vault.Create(vault.Passphrase(testPassphrase), false); err != nil {
		t.Fatal(err)
	}
	if e.m, err = Open(Config{DataDir: dir, Vault: e.vault, Audit: e.audit}); err != nil {
		t.Fatal(err)
	}
	v, err := e.m.Authorization(fv.AuthorizationID)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != StateNeedsReconnection || v.StateReason != "vault_reset" {
		t.Fatalf("after a vault reset: %s (%s)", v.State, v.StateReason)
	}
	r, _ := loadRow(e.m.db, fv.AuthorizationID)
	if len(r.SealedAccess)+len(r.SealedRefresh)+len(r.SealedClientSecret) != 0 {
		t.Fatal("sealed material of the old vault was kept")
	}
	if _, err := e.m.Acquire(context.Background(), fv.AuthorizationID, "x.y"); !errors.Is(err, ErrNeedsReconnection) {
		t.Fatalf("acquire after reset: %v", err)
	}
}
