package hydratest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// ClientSpec describes an OAuth client to register. Zero fields take the
// defaults noted; Hydra fills in the rest.
type ClientSpec struct {
	ID         string // "" => Hydra picks a random UUID
	AuthMethod string // token_endpoint_auth_method: "none" | "client_secret_basic" | "client_secret_post" | "private_key_jwt"
	Secret     string // for client_secret_*; Hydra requires at least 6 characters
	// JWKS is {"keys":[...]}, the client's public keys, for private_key_jwt.
	JWKS json.RawMessage
	// SigningAlg is token_endpoint_auth_signing_alg for private_key_jwt, e.g. "ES256".
	SigningAlg    string
	GrantTypes    []string // default: authorization_code, refresh_token
	ResponseTypes []string // default: code
	Scopes        []string // default: openid offline_access offline
	// RedirectURIs: register "http://127.0.0.1/callback" for a client that
	// listens on an ephemeral loopback port; see the package doc.
	RedirectURIs []string
	Audience     []string
}

// CreateClient registers spec through the admin API (POST /admin/clients) and
// returns the client's ID. It fails t if Hydra refuses.
func (h *Hydra) CreateClient(t testing.TB, spec ClientSpec) (clientID string) {
	t.Helper()
	body := map[string]any{
		"grant_types":    orDefault(spec.GrantTypes, "authorization_code", "refresh_token"),
		"response_types": orDefault(spec.ResponseTypes, "code"),
		"scope":          strings.Join(orDefault(spec.Scopes, "openid", "offline_access", "offline"), " "),
		"redirect_uris":  nonNil(spec.RedirectURIs),
		"audience":       nonNil(spec.Audience),
	}
	for k, v := range map[string]string{
		"client_id":                       spec.ID,
		"client_secret":                   spec.Secret,
		"token_endpoint_auth_method":      spec.AuthMethod,
		"token_endpoint_auth_signing_alg": spec.SigningAlg,
	} {
		if v != "" {
			body[k] = v
		}
	}
	if len(spec.JWKS) > 0 {
		body["jwks"] = spec.JWKS
	}
	var created struct {
		ClientID string `json:"client_id"`
	}
	// The answer holds the client secret: it is decoded, never printed.
	if err := h.adminJSON(http.MethodPost, "/admin/clients", nil, body, &created); err != nil {
		t.Fatalf("hydratest: create client: %v", err)
	}
	if created.ClientID == "" {
		t.Fatal("hydratest: create client: Hydra answered without client_id")
	}
	return created.ClientID
}

func orDefault(s []string, def ...string) []string {
	if len(s) == 0 {
		return def
	}
	return s
}

// Introspection is what Hydra's admin introspection endpoint says about a
// token. An unknown, expired or revoked token is just Active == false.
type Introspection struct {
	Active   bool
	ClientID string
	Subject  string
	Scope    string
	TokenUse string // "access_token" or "refresh_token"
	Exp      int64  // Unix seconds
}

// Introspect asks Hydra about token (admin POST /admin/oauth2/introspect).
// It fails t if the request fails; the token never appears in the message.
func (h *Hydra) Introspect(t testing.TB, token string) Introspection {
	t.Helper()
	resp, err := h.admin.PostForm(h.AdminURL+"/admin/oauth2/introspect", url.Values{"token": {token}})
	if err != nil {
		t.Fatalf("hydratest: introspect: %v", unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("hydratest: introspect: reading the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("hydratest: introspect: %s: %s", resp.Status, b)
	}
	var r struct {
		Active   bool   `json:"active"`
		ClientID string `json:"client_id"`
		Subject  string `json:"sub"`
		Scope    string `json:"scope"`
		TokenUse string `json:"token_use"`
		Exp      int64  `json:"exp"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("hydratest: introspect: decoding the answer: %v", err)
	}
	return Introspection(r)
}
