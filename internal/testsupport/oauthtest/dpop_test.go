package oauthtest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func introspect(t *testing.T, p *Provider, token string) reply {
	t.Helper()
	r := post(t, p, "/introspect", url.Values{"token": {token}}, "")
	if r.status != http.StatusOK {
		t.Fatalf("introspect: %d %s", r.status, r.errorCode())
	}
	return r
}

func jktOf(r reply) string {
	cnf, _ := r.body["cnf"].(map[string]any)
	jkt, _ := cnf["jkt"].(string)
	return jkt
}

// With RequireDPoP the token endpoint refuses a request without a proof,
// and with one issues a DPoP token whose access and refresh tokens are both
// bound to the key's RFC 7638 thumbprint.
func TestDPoPTokenIsBound(t *testing.T) {
	p := New(t, Options{RequireDPoP: true})
	key := newDPoPKey(t)
	deviceCode, userCode := startDevice(t, p)
	if err := p.ApproveDevice(userCode); err != nil {
		t.Fatal(err)
	}
	if got := pollDevice(t, p, deviceCode, "").errorCode(); got != "invalid_dpop_proof" {
		t.Fatalf("token request without proof: %q, want invalid_dpop_proof", got)
	}
	r := pollDevice(t, p, deviceCode, key.proof(t, http.MethodPost, p.URL+"/token", "", ""))
	if r.status != http.StatusOK || r.str("token_type") != "DPoP" {
		t.Fatalf("token request with proof: %d %s, token_type %q", r.status, r.errorCode(), r.str("token_type"))
	}
	for name, token := range map[string]string{"access": r.str("access_token"), "refresh": r.str("refresh_token")} {
		in := introspect(t, p, token)
		if in.body["active"] != true || jktOf(in) != key.thumbprint() {
			t.Errorf("%s token: active %v, cnf.jkt matches the key's thumbprint: %v", name, in.body["active"], jktOf(in) == key.thumbprint())
		}
	}
	if in := introspect(t, p, r.str("access_token")); in.str("token_type") != "DPoP" || in.str("sub") != Subject {
		t.Errorf("introspection token_type %q sub %q", in.str("token_type"), in.str("sub"))
	}
}

// Each RFC 9449 §4.3 check refuses a proof that breaks only it.
func TestTokenEndpointRefusesBadProofs(t *testing.T) {
	key, other := newDPoPKey(t), newDPoPKey(t)
	offCurve := key.jwk()
	offCurve.Y = other.jwk().Y
	withPrivate := map[string]any{"crv": "P-256", "kty": "EC", "x": key.jwk().X, "y": key.jwk().Y,
		"d": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
	cases := []struct {
		name   string
		mutate func(s *proofSpec, p *Provider)
	}{
		{"typ jwt", func(s *proofSpec, _ *Provider) { s.typ = "jwt" }},
		{"alg HS256 in header", func(s *proofSpec, _ *Provider) { s.header = map[string]any{"alg": "HS256"} }},
		{"alg none in header", func(s *proofSpec, _ *Provider) { s.header = map[string]any{"alg": "none"} }},
		{"crit header", func(s *proofSpec, _ *Provider) { s.header = map[string]any{"crit": []string{"exp"}} }},
		{"jwk not an object", func(s *proofSpec, _ *Provider) { s.jwk = "none" }},
		{"jwk with private key", func(s *proofSpec, _ *Provider) { s.jwk = withPrivate }},
		{"jwk of another key", func(s *proofSpec, _ *Provider) { s.jwk = other.jwk() }},
		{"jwk not on the curve", func(s *proofSpec, _ *Provider) { s.jwk = offCurve }},
		{"htm GET", func(s *proofSpec, _ *Provider) { s.htm = http.MethodGet }},
		{"htu of another endpoint", func(s *proofSpec, p *Provider) { s.htu = p.URL + "/resource" }},
		{"htu of another host", func(s *proofSpec, _ *Provider) { s.htu = "http://127.0.0.2:1/token" }},
		{"iat two minutes old", func(s *proofSpec, _ *Provider) { s.iat = time.Now().Add(-2 * time.Minute) }},
		{"iat two minutes ahead", func(s *proofSpec, _ *Provider) { s.iat = time.Now().Add(2 * time.Minute) }},
		{"jti missing", func(s *proofSpec, _ *Provider) { s.jti = "" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := New(t, Options{RequireDPoP: true})
			deviceCode, userCode := startDevice(t, p)
			if err := p.ApproveDevice(userCode); err != nil {
				t.Fatal(err)
			}
			s := key.spec(http.MethodPost, p.URL+"/token")
			c.mutate(&s, p)
			r := pollDevice(t, p, deviceCode, key.sign(t, s))
			if r.status != http.StatusBadRequest || r.errorCode() != "invalid_dpop_proof" {
				t.Fatalf("%d %q, want 400 invalid_dpop_proof", r.status, r.errorCode())
			}
			// The same request with a good proof still succeeds, so the
			// refusal was the broken check and nothing else.
			if r := pollDevice(t, p, deviceCode, key.proof(t, http.MethodPost, p.URL+"/token", "", "")); r.status != http.StatusOK {
				t.Fatalf("good proof afterwards: %d %s", r.status, r.errorCode())
			}
		})
	}
}

func TestTokenEndpointProofShape(t *testing.T) {
	p := New(t, Options{RequireDPoP: true})
	key := newDPoPKey(t)
	good := func() string { return key.proof(t, http.MethodPost, p.URL+"/token", "", "") }

	t.Run("two DPoP headers", func(t *testing.T) {
		deviceCode, userCode := startDevice(t, p)
		if err := p.ApproveDevice(userCode); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/token", strings.NewReader(url.Values{
			"grant_type": {GrantDeviceCode}, "device_code": {deviceCode}, "client_id": {DefaultClientID}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Add("DPoP", good())
		req.Header.Add("DPoP", good())
		if got := do(t, req).errorCode(); got != "invalid_dpop_proof" {
			t.Errorf("%q, want invalid_dpop_proof", got)
		}
	})
	t.Run("replayed jti", func(t *testing.T) {
		proof := good()
		tok := deviceTokensWithProof(t, p, proof)
		if tok.tokenType != "DPoP" {
			t.Fatalf("first use: token_type %q", tok.tokenType)
		}
		if got := refresh(t, p, tok.refresh, proof).errorCode(); got != "invalid_dpop_proof" {
			t.Errorf("replayed proof: %q, want invalid_dpop_proof", got)
		}
	})
	t.Run("htu normalized, query ignored", func(t *testing.T) {
		htu := strings.Replace(p.URL, "http://", "HTTP://", 1) + "/token?x=1#f"
		s := key.spec(http.MethodPost, htu)
		if tok := deviceTokensWithProof(t, p, key.sign(t, s)); tok.tokenType != "DPoP" {
			t.Errorf("token_type %q, want DPoP", tok.tokenType)
		}
	})
}

func deviceTokensWithProof(t *testing.T, p *Provider, proof string) tokens {
	t.Helper()
	deviceCode, userCode := startDevice(t, p)
	if err := p.ApproveDevice(userCode); err != nil {
		t.Fatal(err)
	}
	r := pollDevice(t, p, deviceCode, proof)
	if r.status != http.StatusOK {
		t.Fatalf("device token: %d %s", r.status, r.errorCode())
	}
	return tokens{access: r.str("access_token"), refresh: r.str("refresh_token"), tokenType: r.str("token_type")}
}

// The resource accepts a DPoP token only with a proof of this request, of
// this token, by the bound key, used once (RFC 9449 §7, §4.3).
func TestResourceDPoP(t *testing.T) {
	p := New(t, Options{RequireDPoP: true})
	key, other := newDPoPKey(t), newDPoPKey(t)
	tok := deviceTokens(t, p, key)
	otherTok := deviceTokens(t, p, key)
	resource := p.URL + "/resource"

	replayed := key.proof(t, http.MethodGet, resource, tok.access, "")
	if r := callResource(t, p, http.MethodGet, "DPoP", tok.access, replayed); r.status != http.StatusOK {
		t.Fatalf("first use of the proof: %d %s", r.status, r.errorCode())
	}
	cases := []struct {
		name       string
		method     string
		scheme     string
		proof      string
		wantStatus int
		wantError  string
	}{
		{"correct proof", http.MethodGet, "DPoP", key.proof(t, http.MethodGet, resource, tok.access, ""), 200, ""},
		{"POST with POST proof", http.MethodPost, "DPoP", key.proof(t, http.MethodPost, resource, tok.access, ""), 200, ""},
		{"scheme in lower case, htu with query", http.MethodGet, "dpop", key.proof(t, http.MethodGet, resource+"?q=1", tok.access, ""), 200, ""},
		{"ath of another token", http.MethodGet, "DPoP", key.proof(t, http.MethodGet, resource, otherTok.access, ""), 401, "invalid_dpop_proof"},
		{"no ath", http.MethodGet, "DPoP", key.proof(t, http.MethodGet, resource, "", ""), 401, "invalid_dpop_proof"},
		{"htu of the token endpoint", http.MethodGet, "DPoP", key.proof(t, http.MethodGet, p.URL+"/token", tok.access, ""), 401, "invalid_dpop_proof"},
		{"htm POST on a GET", http.MethodGet, "DPoP", key.proof(t, http.MethodPost, resource, tok.access, ""), 401, "invalid_dpop_proof"},
		{"replayed jti", http.MethodGet, "DPoP", replayed, 401, "invalid_dpop_proof"},
		{"another key", http.MethodGet, "DPoP", other.proof(t, http.MethodGet, resource, tok.access, ""), 401, "invalid_dpop_proof"},
		{"no proof", http.MethodGet, "DPoP", "", 401, "invalid_dpop_proof"},
		{"DPoP token as Bearer", http.MethodGet, "Bearer", "", 401, "invalid_token"},
		{"DPoP token as Bearer with a proof", http.MethodGet, "Bearer", key.proof(t, http.MethodGet, resource, tok.access, ""), 401, "invalid_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := callResource(t, p, c.method, c.scheme, tok.access, c.proof)
			if r.status != c.wantStatus || r.errorCode() != c.wantError {
				t.Fatalf("%d %q, want %d %q", r.status, r.errorCode(), c.wantStatus, c.wantError)
			}
			if c.wantStatus == 200 && (r.body["dpop"] != true || r.str("sub") != Subject) {
				t.Errorf("body %v", r.body)
			}
			if c.wantStatus == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `DPoP error="`+c.wantError+`"`) {
				t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
}

// With DPoPNonce both servers first answer use_dpop_nonce with a nonce, and
// accept a proof that carries it (RFC 9449 §8, §9). Their nonces are their
// own, as two real servers' would be.
func TestDPoPNonce(t *testing.T) {
	p := New(t, Options{RequireDPoP: true, DPoPNonce: true})
	key := newDPoPKey(t)
	deviceCode, userCode := startDevice(t, p)
	if err := p.ApproveDevice(userCode); err != nil {
		t.Fatal(err)
	}
	tokenURL, resource := p.URL+"/token", p.URL+"/resource"

	var asNonce string
	for _, nonce := range []string{"", "made-up"} {
		r := pollDevice(t, p, deviceCode, key.proof(t, http.MethodPost, tokenURL, "", nonce))
		asNonce = r.header.Get("DPoP-Nonce")
		if r.status != http.StatusBadRequest || r.errorCode() != "use_dpop_nonce" || asNonce == "" {
			t.Fatalf("token request with nonce %q: %d %q, DPoP-Nonce set %v", nonce, r.status, r.errorCode(), asNonce != "")
		}
	}
	r := pollDevice(t, p, deviceCode, key.proof(t, http.MethodPost, tokenURL, "", asNonce))
	if r.status != http.StatusOK || r.str("token_type") != "DPoP" {
		t.Fatalf("token request with the nonce: %d %q", r.status, r.errorCode())
	}
	access := r.str("access_token")

	r = callResource(t, p, http.MethodGet, "DPoP", access, key.proof(t, http.MethodGet, resource, access, ""))
	rsNonce := r.header.Get("DPoP-Nonce")
	if r.status != http.StatusUnauthorized || rsNonce == "" ||
		!strings.HasPrefix(r.header.Get("WWW-Authenticate"), `DPoP error="use_dpop_nonce"`) {
		t.Fatalf("resource without nonce: %d, DPoP-Nonce set %v, WWW-Authenticate %q", r.status, rsNonce != "", r.header.Get("WWW-Authenticate"))
	}
	r = callResource(t, p, http.MethodGet, "DPoP", access, key.proof(t, http.MethodGet, resource, access, asNonce))
	if r.errorCode() != "use_dpop_nonce" {
		t.Errorf("resource with the token endpoint's nonce: %d %q, want use_dpop_nonce", r.status, r.errorCode())
	}
	r = callResource(t, p, http.MethodGet, "DPoP", access, key.proof(t, http.MethodGet, resource, access, rsNonce))
	if r.status != http.StatusOK || r.body["dpop"] != true {
		t.Fatalf("resource with its nonce: %d %q", r.status, r.errorCode())
	}
}

// RFC 9449 §5: a public client's refresh token only works with the key it
// was bound to; a confidential client's is not bound, and the new access
// token is bound to whatever key proves the refresh.
func TestDPoPRefreshBinding(t *testing.T) {
	t.Run("public client", func(t *testing.T) {
		p := New(t, Options{RequireDPoP: true})
		key, other := newDPoPKey(t), newDPoPKey(t)
		tok := deviceTokens(t, p, key)
		tokenURL := p.URL + "/token"
		if got := refresh(t, p, tok.refresh, other.proof(t, http.MethodPost, tokenURL, "", "")).errorCode(); got != "invalid_grant" {
			t.Errorf("refresh with another key: %q, want invalid_grant", got)
		}
		if got := refresh(t, p, tok.refresh, "").errorCode(); got != "invalid_dpop_proof" {
			t.Errorf("refresh without a proof: %q, want invalid_dpop_proof", got)
		}
		if !p.Active(tok.refresh) {
			t.Fatal("a refused refresh revoked the refresh token")
		}
		r := refresh(t, p, tok.refresh, key.proof(t, http.MethodPost, tokenURL, "", ""))
		if r.status != http.StatusOK || r.str("token_type") != "DPoP" {
			t.Fatalf("refresh with the bound key: %d %q", r.status, r.errorCode())
		}
		if jktOf(introspect(t, p, r.str("refresh_token"))) != key.thumbprint() {
			t.Error("rotated refresh token is not bound to the key")
		}
	})
	t.Run("confidential client", func(t *testing.T) {
		p := New(t, Options{ClientSecret: "s3cret/+=", RequireDPoP: true})
		key, other := newDPoPKey(t), newDPoPKey(t)
		tok := deviceTokens(t, p, key)
		if jktOf(introspect(t, p, tok.refresh)) != "" {
			t.Error("a confidential client's refresh token is bound")
		}
		r := refresh(t, p, tok.refresh, other.proof(t, http.MethodPost, p.URL+"/token", "", ""))
		if r.status != http.StatusOK {
			t.Fatalf("refresh with another key: %d %q", r.status, r.errorCode())
		}
		if jktOf(introspect(t, p, r.str("access_token"))) != other.thumbprint() {
			t.Error("new access token is not bound to the refreshing key")
		}
	})
}
