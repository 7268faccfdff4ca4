package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServer is an authorization server's metadata, and a registration
// endpoint that answers with body and status.
func authServer(t *testing.T, status int, body string) *httptest.Server {
	t.Helper()
	var s *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%s/authorize","token_endpoint":"%s/token","registration_endpoint":"%s/register",`+
			`"response_types_supported":["code"],"code_challenge_methods_supported":["S256"],"scopes_supported":["read","offline_access"]}`,
			s.URL, s.URL, s.URL, s.URL)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	})
	s = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// resourceServer is an MCP endpoint at /mcp that answers every request
// with status, and serves prm (when not nil) at the well-known path.
func resourceServer(t *testing.T, status int, challenge string, prm func(base string) *oauthex.ProtectedResourceMetadata) *httptest.Server {
	t.Helper()
	var s *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if challenge != "" {
			w.Header().Set("WWW-Authenticate", strings.ReplaceAll(challenge, "BASE", s.URL))
		}
		w.WriteHeader(status)
	})
	if prm != nil {
		mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
			auth.ProtectedResourceMetadataHandler(prm(s.URL)).ServeHTTP(w, r)
		})
	}
	s = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Discovery follows the spec's order and refuses what is not a server
// asking for OAuth: a server that answers without a token, a challenge
// with no metadata anywhere, metadata for another resource, metadata with
// no authorization server. The scopes are the challenge's first, else the
// metadata's.
func TestDiscoverAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	as := authServer(t, http.StatusCreated, `{"client_id":"c-1"}`)
	good := func(base string) *oauthex.ProtectedResourceMetadata {
		return &oauthex.ProtectedResourceMetadata{Resource: base + "/mcp", AuthorizationServers: []string{as.URL}, ScopesSupported: []string{"read"}}
	}
	for name, tc := range map[string]struct {
		srv  *httptest.Server
		want error
		text string
	}{
		"no auth asked": {srv: resourceServer(t, http.StatusOK, "", good), want: ErrNoAuthAsked},
		"no metadata":   {srv: resourceServer(t, http.StatusUnauthorized, `Bearer realm="x"`, nil), want: ErrNoResourceMetadata},
		"another resource": {srv: resourceServer(t, http.StatusUnauthorized, `Bearer resource_metadata="BASE/.well-known/oauth-protected-resource/mcp"`,
			func(string) *oauthex.ProtectedResourceMetadata {
				return &oauthex.ProtectedResourceMetadata{Resource: "https://elsewhere.example/mcp", AuthorizationServers: []string{as.URL}}
			}), want: ErrNoResourceMetadata},
		"no authorization server": {srv: resourceServer(t, http.StatusUnauthorized, `Bearer`,
			func(base string) *oauthex.ProtectedResourceMetadata {
				return &oauthex.ProtectedResourceMetadata{Resource: base + "/mcp"}
			}), want: ErrNoResourceMetadata},
		"a script as the authorization server": {srv: resourceServer(t, http.StatusUnauthorized, `Bearer`,
			func(base string) *oauthex.ProtectedResourceMetadata {
				return &oauthex.ProtectedResourceMetadata{Resource: base + "/mcp", AuthorizationServers: []string{"javascript:alert(1)"}}
			}), want: ErrNoResourceMetadata},
	} {
		_, err := DiscoverAuth(ctx, http.DefaultClient, tc.srv.URL+"/mcp")
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}

	// Found at the well-known path; the challenge's scope wins.
	srv := resourceServer(t, http.StatusUnauthorized, `Bearer scope="read write"`, good)
	d, err := DiscoverAuth(ctx, http.DefaultClient, srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if d.Resource != srv.URL+"/mcp" || d.Issuer != as.URL || d.RegistrationEndpoint != as.URL+"/register" ||
		strings.Join(d.Scopes, " ") != "read write" || !d.OfflineAccess {
		t.Fatalf("discovered %+v", d)
	}
	srv = resourceServer(t, http.StatusUnauthorized, `Bearer`, good)
	if d, err = DiscoverAuth(ctx, http.DefaultClient, srv.URL+"/mcp"); err != nil || strings.Join(d.Scopes, " ") != "read" {
		t.Fatalf("the metadata's scopes: %+v %v", d, err)
	}
}

// Registration keeps the client id (and a secret the server insisted on),
// and quotes nothing the server sent: a refusal says its status and error
// code only, never the body, which can carry a registration access token.
func TestRegister(t *testing.T) {
	ctx := context.Background()
	const token = "REGISTRATION-TOKEN-CANARY"
	for name, tc := range map[string]struct {
		status   int
		body     string
		clientID string
		secret   string
		errText  string
	}{
		"public": {status: http.StatusCreated, body: `{"client_id":"c-1","jwks":{},"registration_access_token":"` + token + `"}`, clientID: "c-1"},
		"confidential": {status: http.StatusCreated, body: `{"client_id":"c-2","client_secret":"s3cr3t-value","registration_access_token":"` + token + `"}`,
			clientID: "c-2", secret: "s3cr3t-value"},
		"refused":      {status: http.StatusBadRequest, body: `{"error":"invalid_redirect_uri","error_description":"` + token + `"}`, errText: "HTTP 400 (invalid_redirect_uri)"},
		"odd error":    {status: http.StatusForbidden, body: `{"error":"` + token + ` <script>"}`, errText: "HTTP 403"},
		"no client id": {status: http.StatusCreated, body: `{"registration_access_token":"` + token + `"}`, errText: "no usable client id"},
		"not json":     {status: http.StatusCreated, body: token, errText: "no usable client id"},
	} {
		as := authServer(t, tc.status, tc.body)
		d := &AuthDiscovery{Issuer: as.URL, RegistrationEndpoint: as.URL + "/register", Scopes: []string{"read"}, OfflineAccess: true}
		r, err := Register(ctx, http.DefaultClient, d, "http://127.0.0.1:4711/callback")
		if tc.errText != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errText) || strings.Contains(err.Error(), token) {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err != nil || r.ClientID != tc.clientID || string(r.ClientSecret) != tc.secret {
			t.Errorf("%s: %+v %v", name, r, err)
		}
	}
	if _, err := Register(ctx, http.DefaultClient, &AuthDiscovery{}, "http://127.0.0.1/callback"); err == nil || !strings.Contains(err.Error(), "give its client id") {
		t.Errorf("no registration endpoint: %v", err)
	}
	if _, err := Register(ctx, http.DefaultClient, &AuthDiscovery{RegistrationEndpoint: "http://as.example/register"}, "http://127.0.0.1/callback"); err == nil {
		t.Error("a registration endpoint over plain http to another host was used")
	}
}
