package oauthtest

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// userCodeAlphabet is the base-20 alphabet of RFC 8628 §6.1: consonants
// only, so no code spells a word and none is mistaken for a digit.
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

type deviceState int

const (
	devicePending deviceState = iota
	deviceApproved
	deviceDenied
	deviceIssued // tokens were handed out; the code is spent
)

type deviceGrant struct {
	userCode string // canonical XXXX-XXXX
	scope    string
	expiry   time.Time
	interval time.Duration // grows with each slow_down
	lastPoll time.Time     // issuance, then every poll
	state    deviceState
}

// newUserCode draws 8 letters uniformly from userCodeAlphabet.
func newUserCode() string {
	var out []byte
	var b [1]byte
	for len(out) < 9 {
		rand.Read(b[:])
		if b[0] >= 240 { // 240 = 12*20: reject to keep the draw uniform
			continue
		}
		if len(out) == 4 {
			out = append(out, '-')
		}
		out = append(out, userCodeAlphabet[b[0]%20])
	}
	return string(out)
}

// normalizeUserCode accepts what a user might type (RFC 8628 §6.1: any case,
// with or without the dash or spaces) and returns the lookup key.
func normalizeUserCode(s string) string {
	s = strings.ToUpper(s)
	return strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, s)
}

func wholeSeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

func (p *Provider) handleDeviceAuthorization(w http.ResponseWriter, r *http.Request) {
	form, oerr := readForm(w, r)
	if oerr == nil {
		oerr = p.authenticateClient(r, form)
	}
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	scope, oerr := requestedScope(form.Get("scope"), supportedScopes)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	now := time.Now()
	deviceCode := randomToken()
	g := &deviceGrant{
		scope:    scope,
		expiry:   now.Add(p.opts.DeviceCodeTTL),
		interval: p.opts.DeviceInterval,
		lastPoll: now,
	}
	p.mu.Lock()
	for {
		g.userCode = newUserCode()
		if p.userCodes[normalizeUserCode(g.userCode)] == nil {
			break
		}
	}
	p.devices[deviceCode] = g
	p.userCodes[normalizeUserCode(g.userCode)] = g
	p.mu.Unlock()

	verification := p.URL + "/device"
	writeJSON(w, http.StatusOK, map[string]any{
		"device_code":               deviceCode,
		"user_code":                 g.userCode,
		"verification_uri":          verification,
		"verification_uri_complete": verification + "?user_code=" + url.QueryEscape(g.userCode),
		"expires_in":                wholeSeconds(p.opts.DeviceCodeTTL),
		"interval":                  wholeSeconds(p.opts.DeviceInterval),
	})
}

func (p *Provider) handleVerificationPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "oauthtest: device codes are approved with Provider.ApproveDevice.")
}

// deviceCodeGrant answers a device_code token request (RFC 8628 §3.4–3.5).
func (p *Provider) deviceCodeGrant(form url.Values, pr *proof) (*tokenResponse, *oauthError) {
	code := form.Get("device_code")
	if code == "" {
		return nil, errInvalidRequest("device_code missing")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.devices[code]
	if g == nil {
		return nil, errInvalidGrant("unknown device_code")
	}
	now := time.Now()
	if now.After(g.expiry) {
		return nil, &oauthError{status: http.StatusBadRequest, code: "expired_token", description: "device_code expired"}
	}
	switch g.state {
	case deviceDenied:
		return nil, &oauthError{status: http.StatusBadRequest, code: "access_denied", description: "the user denied the request"}
	case deviceIssued:
		return nil, errInvalidGrant("device_code was already exchanged")
	case deviceApproved:
		g.state = deviceIssued
		authz := &grant{subject: Subject, scope: g.scope, refreshable: true}
		// RFC 9449 §5: a public client's refresh tokens are bound to the
		// key of the proof that obtained them; a confidential client's are
		// already sender-constrained by its credentials.
		if pr != nil && p.opts.ClientSecret == "" {
			authz.jkt = pr.jkt
		}
		return p.issueLocked(authz, g.scope, pr, now), nil
	}
	tooSoon := now.Sub(g.lastPoll) < g.interval-g.interval/20
	g.lastPoll = now
	if tooSoon {
		g.interval += p.opts.SlowDownStep
		return nil, &oauthError{status: http.StatusBadRequest, code: "slow_down", description: "polling faster than the interval"}
	}
	return nil, &oauthError{status: http.StatusBadRequest, code: "authorization_pending", description: "the user has not answered yet"}
}

// ApproveDevice approves the device code shown to the user as userCode.
// It returns ErrUnknownUserCode, ErrDeviceCodeExpired or ErrDeviceDecided.
func (p *Provider) ApproveDevice(userCode string) error {
	return p.decideDevice(userCode, deviceApproved)
}

// DenyDevice denies the device code shown to the user as userCode, as a user
// pressing "Deny" would. It returns the errors of ApproveDevice.
func (p *Provider) DenyDevice(userCode string) error {
	return p.decideDevice(userCode, deviceDenied)
}

func (p *Provider) decideDevice(userCode string, to deviceState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.userCodes[normalizeUserCode(userCode)]
	switch {
	case g == nil:
		return ErrUnknownUserCode
	case time.Now().After(g.expiry):
		return ErrDeviceCodeExpired
	case g.state != devicePending:
		return ErrDeviceDecided
	}
	g.state = to
	return nil
}

// PendingUserCodes returns the user codes, as XXXX-XXXX, that are neither
// answered nor expired, sorted.
func (p *Provider) PendingUserCodes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var out []string
	for _, g := range p.userCodes {
		if g.state == devicePending && !now.After(g.expiry) {
			out = append(out, g.userCode)
		}
	}
	slices.Sort(out)
	return out
}
