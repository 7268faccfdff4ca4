package oauthtest

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// modes run a test with bearer tokens and with DPoP-bound ones.
type mode struct {
	name string
	opts Options
	key  bool
}

var modes = []mode{{"bearer", Options{}, false}, {"dpop", Options{RequireDPoP: true}, true}}

// start returns a provider, a function that proves a token request (an
// empty proof for bearer) and tokens from a finished device flow.
func (m mode) start(t *testing.T) (*Provider, func() string, tokens) {
	p := New(t, m.opts)
	var key *dpopKey
	prove := func() string { return "" }
	if m.key {
		key = newDPoPKey(t)
		prove = func() string { return key.proof(t, http.MethodPost, p.URL+"/token", "", "") }
	}
	return p, prove, deviceTokens(t, p, key)
}

// Every refresh rotates the refresh token; presenting a superseded one is
// refused and ends the whole grant, including tokens issued after it.
func TestRefreshRotationAndReuse(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			p, prove, first := m.start(t)
			r := refresh(t, p, first.refresh, prove())
			if r.status != http.StatusOK {
				t.Fatalf("refresh: %d %q", r.status, r.errorCode())
			}
			second := tokens{access: r.str("access_token"), refresh: r.str("refresh_token")}
			if second.refresh == "" || second.refresh == first.refresh || second.access == first.access {
				t.Fatal("refresh did not issue a new refresh and access token")
			}
			if p.Active(first.refresh) || !p.Active(second.refresh) || !p.Active(first.access) {
				t.Fatalf("after rotation: old refresh active %v, new refresh active %v, old access active %v",
					p.Active(first.refresh), p.Active(second.refresh), p.Active(first.access))
			}

			if got := refresh(t, p, first.refresh, prove()).errorCode(); got != "invalid_grant" {
				t.Fatalf("reused refresh token: %q, want invalid_grant", got)
			}
			for name, tok := range map[string]string{
				"first access": first.access, "second access": second.access, "second refresh": second.refresh,
			} {
				if p.Active(tok) {
					t.Errorf("%s token still active after reuse", name)
				}
			}
			if got := refresh(t, p, second.refresh, prove()).errorCode(); got != "invalid_grant" {
				t.Errorf("refresh with the revoked grant: %q, want invalid_grant", got)
			}
			if r := callResource(t, p, http.MethodGet, "Bearer", second.access, ""); r.status != http.StatusUnauthorized {
				t.Errorf("resource with a revoked token: %d", r.status)
			}
		})
	}
}

// RFC 6749 §6: a refresh may narrow the scope of the new access token, not
// widen it, and the grant keeps its scope for later refreshes.
func TestRefreshScope(t *testing.T) {
	p := New(t, Options{})
	tok := deviceTokens(t, p, nil) // granted "read write"
	r := post(t, p, "/token", url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {tok.refresh}, "scope": {"read"}}, "")
	if r.status != http.StatusOK || r.str("scope") != "read" {
		t.Fatalf("narrowing refresh: %d %q, scope %q", r.status, r.errorCode(), r.str("scope"))
	}
	next := r.str("refresh_token")
	if got := introspect(t, p, next).str("scope"); got != "read write" {
		t.Errorf("grant scope after narrowing: %q, want %q", got, "read write")
	}
	r = post(t, p, "/token", url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {next}, "scope": {"read admin"}}, "")
	if r.errorCode() != "invalid_scope" {
		t.Errorf("widening refresh: %q, want invalid_scope", r.errorCode())
	}
}

func TestAccessTokenExpires(t *testing.T) {
	p := New(t, Options{AccessTTL: 100 * time.Millisecond})
	deviceCode, userCode := startDevice(t, p)
	if err := p.ApproveDevice(userCode); err != nil {
		t.Fatal(err)
	}
	r := pollDevice(t, p, deviceCode, "")
	if r.body["expires_in"] != 1.0 {
		t.Errorf("expires_in %v, want 1 (whole seconds, rounded up)", r.body["expires_in"])
	}
	access := r.str("access_token")
	if !p.Active(access) {
		t.Fatal("fresh access token is not active")
	}
	time.Sleep(150 * time.Millisecond)
	if p.Active(access) || callResource(t, p, http.MethodGet, "Bearer", access, "").status != http.StatusUnauthorized {
		t.Error("expired access token still accepted")
	}
	if !p.Active(r.str("refresh_token")) {
		t.Error("refresh token expired with the access token")
	}
}

// RFC 7009: revoking a refresh token ends its access tokens as well;
// revoking an access token ends only it; unknown tokens get 200.
func TestRevoke(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name+"/refresh token", func(t *testing.T) {
			p, _, tok := m.start(t)
			if r := post(t, p, "/revoke", url.Values{"token": {tok.refresh}, "token_type_hint": {"access_token"}}, ""); r.status != http.StatusOK {
				t.Fatalf("revoke: %d %q", r.status, r.errorCode())
			}
			for name, v := range map[string]string{"access": tok.access, "refresh": tok.refresh} {
				if p.Active(v) || introspect(t, p, v).body["active"] != false {
					t.Errorf("%s token active after revoking the refresh token", name)
				}
			}
		})
		t.Run(m.name+"/access token", func(t *testing.T) {
			p, _, tok := m.start(t)
			if r := post(t, p, "/revoke", url.Values{"token": {tok.access}}, ""); r.status != http.StatusOK {
				t.Fatalf("revoke: %d %q", r.status, r.errorCode())
			}
			if p.Active(tok.access) || !p.Active(tok.refresh) {
				t.Errorf("access active %v (want false), refresh active %v (want true)", p.Active(tok.access), p.Active(tok.refresh))
			}
		})
	}
	p := New(t, Options{})
	if r := post(t, p, "/revoke", url.Values{"token": {"never-issued"}}, ""); r.status != http.StatusOK {
		t.Errorf("revoking an unknown token: %d, want 200", r.status)
	}
	if r := post(t, p, "/revoke", url.Values{}, ""); r.errorCode() != "invalid_request" {
		t.Errorf("revoke without token: %q, want invalid_request", r.errorCode())
	}
	if introspect(t, p, "never-issued").body["active"] != false {
		t.Error("unknown token introspects as active")
	}
}
