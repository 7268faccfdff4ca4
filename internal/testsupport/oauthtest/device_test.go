package oauthtest

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

var userCodePattern = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`)

// publicConfig is an x/oauth2 client for p's public client. AuthStyle is
// set explicitly: auto-detection would retry with another style on error
// and hide which one the provider accepted.
func publicConfig(p *Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: DefaultClientID,
		Scopes:   []string{"read"},
		Endpoint: oauth2.Endpoint{
			DeviceAuthURL: p.URL + "/device_authorization",
			TokenURL:      p.URL + "/token",
			AuthStyle:     oauth2.AuthStyleInParams,
		},
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An unmodified x/oauth2 client completes the flow: it polls, is told
// authorization_pending, and gets tokens after approval, without ever
// polling too fast.
func TestDeviceFlowWithOAuth2Client(t *testing.T) {
	p := New(t, Options{})
	cfg := publicConfig(p)
	da, err := cfg.DeviceAuth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !userCodePattern.MatchString(da.UserCode) {
		t.Errorf("user code %q is not XXXX-XXXX from the RFC 8628 §6.1 alphabet", da.UserCode)
	}
	if want := p.URL + "/device?user_code=" + url.QueryEscape(da.UserCode); da.VerificationURIComplete != want {
		t.Errorf("verification_uri_complete = %q, want %q", da.VerificationURIComplete, want)
	}
	if da.Interval != 1 || da.VerificationURI != p.URL+"/device" {
		t.Errorf("interval %d, verification_uri %q", da.Interval, da.VerificationURI)
	}
	if got := p.PendingUserCodes(); len(got) != 1 || got[0] != da.UserCode {
		t.Fatalf("PendingUserCodes = %q, want the one issued", got)
	}

	type result struct {
		tok *oauth2.Token
		err error
	}
	done := make(chan result, 1)
	go func() {
		tok, err := cfg.DeviceAccessToken(t.Context(), da)
		done <- result{tok, err}
	}()
	waitFor(t, "the first poll", func() bool { return p.TokenRequests()[GrantDeviceCode] >= 1 })
	// What a user types: lower case, no dash (RFC 8628 §6.1).
	if err := p.ApproveDevice(strings.ToLower(strings.ReplaceAll(da.UserCode, "-", ""))); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.tok.TokenType != "Bearer" || res.tok.RefreshToken == "" || !p.Active(res.tok.AccessToken) {
		t.Fatalf("token type %q, refresh token present %v, active %v",
			res.tok.TokenType, res.tok.RefreshToken != "", p.Active(res.tok.AccessToken))
	}
	if n := p.TokenRequests()[GrantDeviceCode]; n != 2 {
		t.Errorf("%d device polls, want 2 (pending, then tokens)", n)
	}
	r := callResource(t, p, http.MethodGet, "Bearer", res.tok.AccessToken, "")
	if r.status != http.StatusOK || r.str("sub") != Subject || r.str("scope") != "read" || r.body["dpop"] != false {
		t.Errorf("resource: %d %v", r.status, r.body)
	}
	if got := p.PendingUserCodes(); len(got) != 0 {
		t.Errorf("PendingUserCodes after approval = %q", got)
	}
	if err := p.ApproveDevice(da.UserCode); !errors.Is(err, ErrDeviceDecided) {
		t.Errorf("second approval: %v, want ErrDeviceDecided", err)
	}
	if err := p.ApproveDevice("BBBB-BBBB"); !errors.Is(err, ErrUnknownUserCode) {
		t.Errorf("unknown code: %v, want ErrUnknownUserCode", err)
	}
}

func TestDeviceDenied(t *testing.T) {
	p := New(t, Options{})
	cfg := publicConfig(p)
	da, err := cfg.DeviceAuth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.DenyDevice(da.UserCode); err != nil {
		t.Fatal(err)
	}
	_, err = cfg.DeviceAccessToken(t.Context(), da)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "access_denied" {
		t.Fatalf("DeviceAccessToken after denial: %v, want access_denied", err)
	}
}

// Polling faster than the interval is answered with slow_down, and the
// interval then grows by SlowDownStep for every later poll (RFC 8628 §3.5).
func TestDeviceSlowDown(t *testing.T) {
	p := New(t, Options{DeviceInterval: 200 * time.Millisecond, SlowDownStep: 300 * time.Millisecond})
	r := post(t, p, "/device_authorization", url.Values{}, "")
	if r.body["interval"] != 1.0 {
		t.Errorf("advertised interval %v, want 1 (whole seconds, rounded up)", r.body["interval"])
	}
	deviceCode := r.str("device_code")
	steps := []struct {
		wait time.Duration
		want string
	}{
		{0, "slow_down"},                      // before the 200 ms interval; it becomes 500 ms
		{250 * time.Millisecond, "slow_down"}, // enough for 200 ms, not for 500; it becomes 800 ms
		{850 * time.Millisecond, "authorization_pending"},
		{850 * time.Millisecond, "authorization_pending"},
	}
	for i, s := range steps {
		time.Sleep(s.wait)
		if got := pollDevice(t, p, deviceCode, "").errorCode(); got != s.want {
			t.Fatalf("poll %d after %v: %q, want %q", i, s.wait, got, s.want)
		}
	}
}

func TestDeviceCodeExpires(t *testing.T) {
	p := New(t, Options{DeviceCodeTTL: 200 * time.Millisecond, DeviceInterval: 10 * time.Millisecond})
	r := post(t, p, "/device_authorization", url.Values{}, "")
	if r.body["expires_in"] != 1.0 {
		t.Errorf("expires_in %v, want 1 (whole seconds, rounded up)", r.body["expires_in"])
	}
	time.Sleep(300 * time.Millisecond)
	if got := pollDevice(t, p, r.str("device_code"), "").errorCode(); got != "expired_token" {
		t.Errorf("poll after expiry: %q, want expired_token", got)
	}
	if err := p.ApproveDevice(r.str("user_code")); !errors.Is(err, ErrDeviceCodeExpired) {
		t.Errorf("approve after expiry: %v, want ErrDeviceCodeExpired", err)
	}
	if got := p.PendingUserCodes(); len(got) != 0 {
		t.Errorf("PendingUserCodes lists an expired code: %q", got)
	}
}

func TestDeviceCodeIsSingleUse(t *testing.T) {
	p := New(t, Options{DeviceInterval: 10 * time.Millisecond})
	deviceCode, userCode := startDevice(t, p)
	if err := p.ApproveDevice(userCode); err != nil {
		t.Fatal(err)
	}
	if r := pollDevice(t, p, deviceCode, ""); r.status != http.StatusOK {
		t.Fatalf("first exchange: %d %s", r.status, r.errorCode())
	}
	if got := pollDevice(t, p, deviceCode, "").errorCode(); got != "invalid_grant" {
		t.Errorf("second exchange: %q, want invalid_grant", got)
	}
	if got := pollDevice(t, p, "not-a-device-code", "").errorCode(); got != "invalid_grant" {
		t.Errorf("unknown device code: %q, want invalid_grant", got)
	}
}
