package hydratest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// loopbackRedirect is what a client listening on 127.0.0.1 with an ephemeral
// port registers: Hydra ignores the port of a loopback redirect URI.
const loopbackRedirect = "http://127.0.0.1/callback"

// callback is the app's redirect endpoint on an ephemeral loopback port.
type callback struct {
	srv *httptest.Server
	got chan url.Values
}

func newCallback(t *testing.T) *callback {
	t.Helper()
	cb := &callback{got: make(chan url.Values, 4)}
	cb.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		cb.got <- r.URL.Query()
		w.Write([]byte("you may close this window"))
	}))
	t.Cleanup(cb.srv.Close)
	return cb
}

func (cb *callback) url() string { return cb.srv.URL + "/callback" }

// publicClient registers a public client (no secret, PKCE) with the loopback
// redirect at Hydra, and configures it for cb, tokenURL and scopes.
func publicClient(t *testing.T, h *Hydra, cb *callback, tokenURL string, scopes ...string) *oauth2.Config {
	t.Helper()
	return &oauth2.Config{
		ClientID: h.CreateClient(t, ClientSpec{AuthMethod: "none", RedirectURIs: []string{loopbackRedirect}}),
		Endpoint: oauth2.Endpoint{
			AuthURL:   h.PublicURL + "/oauth2/auth",
			TokenURL:  tokenURL,
			AuthStyle: oauth2.AuthStyleInParams,
		},
		RedirectURL: cb.url(),
		Scopes:      scopes,
	}
}

// authorize runs the browser part of the code flow and returns the query the
// app's callback received.
func authorize(t *testing.T, h *Hydra, cb *callback, authURL string) url.Values {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	status, final, err := h.Browse(ctx, authURL)
	if err != nil {
		t.Fatalf("Browse: %v", err)
	}
	if status != http.StatusOK || final != cb.url() {
		t.Fatalf("Browse ended at %s with %d, want %s with 200", final, status, cb.url())
	}
	select {
	case q := <-cb.got:
		return q
	default:
		t.Fatal("the callback was not called")
		return nil
	}
}

func randomState(t *testing.T) string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// errorCode is the OAuth error code of a token endpoint failure; the error
// itself is not printed because its text quotes the response body.
func errorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	if err != nil {
		return "(not an OAuth error response)"
	}
	return ""
}

// assertNotInLog checks that Hydra's log holds none of the secrets.
func assertNotInLog(t *testing.T, h *Hydra, secrets ...string) {
	t.Helper()
	b, err := os.ReadFile(h.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range secrets {
		if s != "" && strings.Contains(string(b), s) {
			t.Errorf("secret %d of %d appears in Hydra's log", i+1, len(secrets))
		}
	}
}

// jwtHeader returns the alg and kid of a compact JWS, "" if it is not one.
func jwtHeader(jws string) (alg, kid string) {
	b, err := base64.RawURLEncoding.DecodeString(strings.SplitN(jws, ".", 2)[0])
	if err != nil {
		return "", ""
	}
	var h struct{ Alg, Kid string }
	json.Unmarshal(b, &h)
	return h.Alg, h.Kid
}

func refresh(ctx context.Context, conf *oauth2.Config, refreshToken string) (*oauth2.Token, error) {
	return conf.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken}).Token()
}

// A public client with PKCE through a real browser flow to a loopback
// callback on an ephemeral port; one rotation; reuse of the rotated refresh
// token is refused and revokes the family; the proxy saw exactly the token
// requests the client sent.
func TestPublicClientPKCERotationAndReuse(t *testing.T) {
	t.Parallel()
	began := time.Now()
	h := Start(t, Options{})
	t.Logf("Start took %v", time.Since(began).Round(time.Millisecond))
	counter := h.CountingProxy(t)
	var mu sync.Mutex
	var forwarded, answered []string
	counter.SetHook(func(grantType string) {
		mu.Lock()
		defer mu.Unlock()
		forwarded = append(forwarded, grantType)
	})
	counter.SetResponseHook(func(grantType string, status int) {
		mu.Lock()
		defer mu.Unlock()
		answered = append(answered, grantType+" "+http.StatusText(status))
	})
	cb := newCallback(t)
	conf := publicClient(t, h, cb, counter.URL+"/oauth2/token", "offline_access")
	ctx := t.Context()

	verifier, state := oauth2.GenerateVerifier(), randomState(t)
	q := authorize(t, h, cb, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	if q.Get("state") != state || q.Get("code") == "" {
		t.Fatalf("callback got state match %v, code present %v, error %q", q.Get("state") == state, q.Get("code") != "", q.Get("error"))
	}
	first, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: OAuth error %q", errorCode(err))
	}
	if first.AccessToken == "" || first.RefreshToken == "" {
		t.Fatalf("exchange: access token present %v, refresh token present %v", first.AccessToken != "", first.RefreshToken != "")
	}
	if got := h.Introspect(t, first.AccessToken); !got.Active || got.Subject != defaultSubject || got.ClientID != conf.ClientID || got.TokenUse != "access_token" {
		t.Errorf("access token introspection: active %v, subject %q, client %q, use %q", got.Active, got.Subject, got.ClientID, got.TokenUse)
	}

	second, err := refresh(ctx, conf, first.RefreshToken)
	if err != nil {
		t.Fatalf("refresh: OAuth error %q", errorCode(err))
	}
	if second.RefreshToken == "" || second.RefreshToken == first.RefreshToken {
		t.Fatal("refresh did not rotate the refresh token")
	}
	if got, want := counter.TokenRequests(), map[string]int{"authorization_code": 1, "refresh_token": 1}; !maps.Equal(got, want) {
		t.Errorf("token requests %v, want %v", got, want)
	}
	if got, want := counter.RefreshTokensPresented(), []string{HashToken(first.RefreshToken)}; !slices.Equal(got, want) {
		t.Errorf("refresh tokens presented: %d hashes, want exactly the first refresh token's", len(got))
	}

	_, err = refresh(ctx, conf, first.RefreshToken)
	if code := errorCode(err); code != "invalid_grant" {
		t.Fatalf("reusing the rotated refresh token: OAuth error %q, want invalid_grant", code)
	}
	if h.Introspect(t, second.RefreshToken).Active {
		t.Error("after reuse of its predecessor the new refresh token is still active; Hydra should revoke the family")
	}
	if h.Introspect(t, second.AccessToken).Active {
		t.Error("after reuse of its predecessor's refresh token the new access token is still active")
	}
	assertNotInLog(t, h, first.AccessToken, first.RefreshToken, second.AccessToken, second.RefreshToken)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"authorization_code", "refresh_token", "refresh_token"}; !slices.Equal(forwarded, want) {
		t.Errorf("hook saw %q, want %q", forwarded, want)
	}
	if want := []string{"authorization_code OK", "refresh_token OK", "refresh_token Bad Request"}; !slices.Equal(answered, want) {
		t.Errorf("response hook saw %q, want %q", answered, want)
	}
}

// A confidential client with client_secret_basic gets a token by
// client_credentials; Hydra holds it to its registered auth method and secret.
// AccessTokenTTL reaches Hydra.
func TestClientCredentialsSecretBasic(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{AccessTokenTTL: 90 * time.Second})
	secret := "hydratest-canary-client-secret-" + randomState(t)
	id := h.CreateClient(t, ClientSpec{
		AuthMethod: "client_secret_basic",
		Secret:     secret,
		GrantTypes: []string{"client_credentials"},
		Scopes:     []string{"read", "write"},
	})
	tokenURL := h.PublicURL + "/oauth2/token"
	for _, tc := range []struct {
		name     string
		secret   string
		style    oauth2.AuthStyle
		wantCode string
	}{
		{"basic", secret, oauth2.AuthStyleInHeader, ""},
		{"wrong secret", secret + "x", oauth2.AuthStyleInHeader, "invalid_client"},
		{"post instead of basic", secret, oauth2.AuthStyleInParams, "invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := clientcredentials.Config{ClientID: id, ClientSecret: tc.secret, TokenURL: tokenURL, Scopes: []string{"read"}, AuthStyle: tc.style}
			issued := time.Now()
			tok, err := cc.Token(t.Context())
			if code := errorCode(err); code != tc.wantCode {
				t.Fatalf("OAuth error %q, want %q", code, tc.wantCode)
			}
			if err != nil {
				return
			}
			got := h.Introspect(t, tok.AccessToken)
			if !got.Active || got.ClientID != id || got.Subject != id || got.Scope != "read" || got.TokenUse != "access_token" {
				t.Errorf("introspection: active %v, client %q, subject %q, scope %q, use %q", got.Active, got.ClientID, got.Subject, got.Scope, got.TokenUse)
			}
			if ttl := time.Unix(got.Exp, 0).Sub(issued); ttl < 85*time.Second || ttl > 95*time.Second {
				t.Errorf("access token expires %v after issue, want 90s (TTL_ACCESS_TOKEN)", ttl.Round(time.Second))
			}
			assertNotInLog(t, h, secret, tok.AccessToken)
		})
	}
}

// DenyConsent makes the callback receive error=access_denied; switched off,
// the same client completes an OpenID flow as Options.Subject, and
// RefreshTokenTTL reaches Hydra.
func TestDenyConsentAndSubject(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{Subject: "bob@example.test", RefreshTokenTTL: 2 * time.Hour})
	cb := newCallback(t)
	conf := publicClient(t, h, cb, h.PublicURL+"/oauth2/token", "openid", "offline_access")

	h.DenyConsent(true)
	verifier, state := oauth2.GenerateVerifier(), randomState(t)
	q := authorize(t, h, cb, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	if q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != state {
		t.Fatalf("denied consent: callback got error %q, code present %v, state match %v", q.Get("error"), q.Get("code") != "", q.Get("state") == state)
	}

	h.DenyConsent(false)
	verifier, state = oauth2.GenerateVerifier(), randomState(t)
	q = authorize(t, h, cb, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	if q.Get("code") == "" || q.Get("state") != state {
		t.Fatalf("consent granted: callback got error %q, code present %v, state match %v", q.Get("error"), q.Get("code") != "", q.Get("state") == state)
	}
	issued := time.Now()
	tok, err := conf.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: OAuth error %q", errorCode(err))
	}
	idt, _ := tok.Extra("id_token").(string)
	if alg, kid := jwtHeader(idt); alg != "RS256" || !strings.HasPrefix(kid, "hydratest-") {
		t.Errorf("id_token header: alg %q, kid %q; want RS256 with the key Start installed", alg, kid)
	}
	if got := h.Introspect(t, tok.AccessToken); got.Subject != "bob@example.test" || !strings.Contains(" "+got.Scope+" ", " openid ") {
		t.Errorf("access token: subject %q, scope %q", got.Subject, got.Scope)
	}
	got := h.Introspect(t, tok.RefreshToken)
	if ttl := time.Unix(got.Exp, 0).Sub(issued); !got.Active || got.TokenUse != "refresh_token" || ttl < 2*time.Hour-time.Minute || ttl > 2*time.Hour+time.Minute {
		t.Errorf("refresh token: active %v, use %q, expires %v after issue, want 2h (TTL_REFRESH_TOKEN)", got.Active, got.TokenUse, ttl.Round(time.Second))
	}
}

// With a rotation grace period a rotated refresh token still works once more
// and does not revoke the family: the option reaches Hydra.
func TestRotationGracePeriod(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{RotationGracePeriod: time.Minute})
	cb := newCallback(t)
	conf := publicClient(t, h, cb, h.PublicURL+"/oauth2/token", "offline_access")
	verifier := oauth2.GenerateVerifier()
	q := authorize(t, h, cb, conf.AuthCodeURL(randomState(t), oauth2.S256ChallengeOption(verifier)))
	first, err := conf.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: OAuth error %q", errorCode(err))
	}
	second, err := refresh(t.Context(), conf, first.RefreshToken)
	if err != nil {
		t.Fatalf("refresh: OAuth error %q", errorCode(err))
	}
	if _, err := refresh(t.Context(), conf, first.RefreshToken); err != nil {
		t.Fatalf("reuse within the grace period: OAuth error %q, want success", errorCode(err))
	}
	if !h.Introspect(t, second.RefreshToken).Active {
		t.Error("reuse within the grace period revoked the family")
	}
}

// What a loopback client must register: Hydra ignores the port of an
// http://127.0.0.1 redirect URI but matches host and path exactly.
func TestLoopbackRedirectMatching(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{})
	cb := newCallback(t)
	port := strings.TrimPrefix(cb.srv.URL, "http://127.0.0.1:")
	for _, tc := range []struct {
		name, registered, requested string
		reachesCallback             bool
	}{
		{"no port registered", "http://127.0.0.1/callback", cb.url(), true},
		{"other port registered", "http://127.0.0.1:1/callback", cb.url(), true},
		{"localhost is not a loopback literal", "http://127.0.0.1/callback", "http://localhost:" + port + "/callback", false},
		{"path must match", "http://127.0.0.1/cb", cb.url(), false},
		{"127.0.0.1 is not [::1]", "http://[::1]/callback", cb.url(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := &oauth2.Config{
				ClientID:    h.CreateClient(t, ClientSpec{AuthMethod: "none", RedirectURIs: []string{tc.registered}}),
				Endpoint:    oauth2.Endpoint{AuthURL: h.PublicURL + "/oauth2/auth", AuthStyle: oauth2.AuthStyleInParams},
				RedirectURL: tc.requested,
				Scopes:      []string{"offline_access"},
			}
			authURL := conf.AuthCodeURL(randomState(t), oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
			_, final, err := h.Browse(t.Context(), authURL)
			if err != nil {
				t.Fatalf("Browse: %v", err)
			}
			select {
			case <-cb.got:
				if !tc.reachesCallback {
					t.Errorf("Hydra redirected to the callback (ended at %s)", final)
				}
			default:
				if tc.reachesCallback {
					t.Errorf("the callback was not called; Browse ended at %s", final)
				}
				// Hydra refuses an unregistered redirect URI on its own error page.
				if want := h.PublicURL + "/oauth2/fallbacks/error"; final != want {
					t.Errorf("Browse ended at %s, want Hydra's error page %s", final, want)
				}
			}
		})
	}
}

// BenchmarkStart measures Start: schema copy, serve until ready, ID token
// key. Every Hydra runs until the benchmark ends.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		Start(b, Options{})
	}
}
