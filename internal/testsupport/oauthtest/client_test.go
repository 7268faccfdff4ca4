package oauthtest

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

const testSecret = "s3cret/+= with spaces"

func TestMetadata(t *testing.T) {
	for _, c := range []struct {
		opts       Options
		authMethod string
	}{{Options{}, "none"}, {Options{ClientSecret: testSecret}, "client_secret_basic"}} {
		t.Run(c.authMethod, func(t *testing.T) {
			p := New(t, c.opts)
			if !strings.HasPrefix(p.URL, "http://127.0.0.1:") {
				t.Errorf("URL %q is not on 127.0.0.1", p.URL)
			}
			req, _ := http.NewRequest(http.MethodGet, p.URL+"/.well-known/oauth-authorization-server", nil)
			served := do(t, req)
			want := roundTrip(t, p.Metadata())
			if served.status != http.StatusOK || !reflect.DeepEqual(served.body, want) {
				t.Fatalf("served %d %v, Metadata() %v", served.status, served.body, want)
			}
			checks := map[string]any{
				"issuer":                                p.URL,
				"token_endpoint":                        p.URL + "/token",
				"device_authorization_endpoint":         p.URL + "/device_authorization",
				"revocation_endpoint":                   p.URL + "/revoke",
				"introspection_endpoint":                p.URL + "/introspect",
				"token_endpoint_auth_methods_supported": []any{c.authMethod},
				"dpop_signing_alg_values_supported":     []any{"ES256"},
				"grant_types_supported":                 []any{GrantDeviceCode, GrantRefreshToken, GrantClientCredentials},
				"scopes_supported":                      []any{"read", "write"},
			}
			for name, v := range checks {
				if !reflect.DeepEqual(served.body[name], v) {
					t.Errorf("%s = %v, want %v", name, served.body[name], v)
				}
			}
		})
	}
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func confidentialCC(p *Provider, secret string, style oauth2.AuthStyle) *clientcredentials.Config {
	return &clientcredentials.Config{
		ClientID: DefaultClientID, ClientSecret: secret, TokenURL: p.URL + "/token",
		Scopes: []string{"write"}, AuthStyle: style,
	}
}

func retrieveCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// A confidential client authenticates with client_secret_basic, form-
// urlencoding id and secret (RFC 6749 §2.3.1), and nothing else.
func TestConfidentialClient(t *testing.T) {
	p := New(t, Options{ClientSecret: testSecret})

	tok, err := confidentialCC(p, testSecret, oauth2.AuthStyleInHeader).Token(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken != "" {
		t.Error("client_credentials issued a refresh token (RFC 6749 §4.4.3)")
	}
	if in := introspect(t, p, tok.AccessToken); in.str("sub") != DefaultClientID || in.str("scope") != "write" {
		t.Errorf("introspection sub %q scope %q", in.str("sub"), in.str("scope"))
	}

	_, err = confidentialCC(p, "wrong", oauth2.AuthStyleInHeader).Token(t.Context())
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_client" || re.Response.StatusCode != http.StatusUnauthorized ||
		!strings.HasPrefix(re.Response.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("wrong secret: %v, want 401 invalid_client with a Basic challenge", err)
	}
	if _, err := confidentialCC(p, testSecret, oauth2.AuthStyleInParams).Token(t.Context()); retrieveCode(err) != "invalid_client" {
		t.Errorf("client_secret_post: %v, want invalid_client", err)
	}

	// RFC 8628 §3.1 applies the client authentication of the token
	// endpoint to device authorization too. x/oauth2's DeviceAuth sends no
	// credentials, so a confidential client cannot use it as is.
	cfg := &oauth2.Config{ClientID: DefaultClientID, ClientSecret: testSecret, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: p.URL + "/device_authorization", TokenURL: p.URL + "/token", AuthStyle: oauth2.AuthStyleInHeader}}
	if _, err := cfg.DeviceAuth(t.Context()); retrieveCode(err) != "invalid_client" {
		t.Errorf("DeviceAuth without credentials: %v, want invalid_client", err)
	}
	if tok := deviceTokens(t, p, nil); !p.Active(tok.access) {
		t.Error("device flow with client_secret_basic did not issue an active token")
	}
}

func TestPublicClient(t *testing.T) {
	p := New(t, Options{})
	if got := post(t, p, "/token", url.Values{"grant_type": {GrantClientCredentials}}, "").errorCode(); got != "unauthorized_client" {
		t.Errorf("client_credentials for a public client: %q, want unauthorized_client", got)
	}
	if got := post(t, p, "/device_authorization", url.Values{"client_id": {"someone-else"}}, "").errorCode(); got != "invalid_client" {
		t.Errorf("unknown client_id: %q, want invalid_client", got)
	}
	if got := post(t, p, "/device_authorization", url.Values{"client_secret": {"guess"}}, "").errorCode(); got != "invalid_client" {
		t.Errorf("public client sending client_secret: %q, want invalid_client", got)
	}
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/device_authorization", strings.NewReader("client_id="+DefaultClientID))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(DefaultClientID, "")
	if got := do(t, req).errorCode(); got != "invalid_client" {
		t.Errorf("public client sending Basic credentials: %q, want invalid_client", got)
	}
}

// Requests break RFC 6749's rules for the token endpoint one at a time.
func TestTokenRequestRules(t *testing.T) {
	p := New(t, Options{})
	cases := []struct {
		name, method, contentType, body, want string
	}{
		{"GET", http.MethodGet, "", "", "invalid_request"},
		{"JSON body", http.MethodPost, "application/json", `{"grant_type":"refresh_token"}`, "invalid_request"},
		{"repeated parameter", http.MethodPost, "application/x-www-form-urlencoded", "client_id=yett-test&grant_type=password&grant_type=password", "invalid_request"},
		{"no grant_type", http.MethodPost, "application/x-www-form-urlencoded", "client_id=yett-test", "invalid_request"},
		{"unknown grant_type", http.MethodPost, "application/x-www-form-urlencoded", "client_id=yett-test&grant_type=password", "unsupported_grant_type"},
		{"refresh_token missing", http.MethodPost, "application/x-www-form-urlencoded", "client_id=yett-test&grant_type=refresh_token", "invalid_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, p.URL+"/token", strings.NewReader(c.body))
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			r := do(t, req)
			if r.errorCode() != c.want || r.header.Get("Cache-Control") != "no-store" {
				t.Errorf("%d %q Cache-Control %q, want %q and no-store", r.status, r.errorCode(), r.header.Get("Cache-Control"), c.want)
			}
		})
	}
	if got := post(t, p, "/device_authorization", url.Values{"scope": {"read admin"}}, "").errorCode(); got != "invalid_scope" {
		t.Errorf("device authorization with an unknown scope: %q, want invalid_scope", got)
	}
}
