package oauthtest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// grant is one authorization: everything descended from one device code,
// or one client_credentials request. Revoking it ends all its tokens.
type grant struct {
	subject     string
	scope       string // the most any token of the grant may carry
	refreshable bool   // false for client_credentials (RFC 6749 §4.4.3)
	jkt         string // key the refresh tokens are bound to; "" when unbound
	revoked     bool
}

type accessToken struct {
	grant   *grant
	scope   string
	jkt     string // cnf.jkt; "" for a bearer token
	issued  time.Time
	expiry  time.Time
	revoked bool
}

func (t *accessToken) active(now time.Time) bool {
	return !t.revoked && !t.grant.revoked && now.Before(t.expiry)
}

type refreshToken struct {
	grant      *grant
	issued     time.Time
	superseded bool // rotated away; presenting it again is reuse
}

func (t *refreshToken) active() bool { return !t.superseded && !t.grant.revoked }

// tokenResponse is the RFC 6749 §5.1 success body.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// issueLocked mints an access token for g, bound to the proof's key when
// there is one, and a refresh token when g is refreshable.
// The caller holds p.mu.
func (p *Provider) issueLocked(g *grant, scope string, pr *proof, now time.Time) *tokenResponse {
	at := &accessToken{grant: g, scope: scope, issued: now, expiry: now.Add(p.opts.AccessTTL)}
	resp := &tokenResponse{TokenType: "Bearer", ExpiresIn: wholeSeconds(p.opts.AccessTTL), Scope: scope}
	if pr != nil {
		at.jkt = pr.jkt
		resp.TokenType = "DPoP"
	}
	resp.AccessToken = randomToken()
	p.access[resp.AccessToken] = at
	if g.refreshable {
		resp.RefreshToken = randomToken()
		p.refresh[resp.RefreshToken] = &refreshToken{grant: g, issued: now}
	}
	return resp
}

// refreshGrant rotates a refresh token (RFC 6749 §6, RFC 9700 §4.14.2).
func (p *Provider) refreshGrant(form url.Values, pr *proof) (*tokenResponse, *oauthError) {
	value := form.Get("refresh_token")
	if value == "" {
		return nil, errInvalidRequest("refresh_token missing")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rt := p.refresh[value]
	switch {
	case rt == nil || rt.grant.revoked:
		return nil, errInvalidGrant("refresh token is not active")
	case rt.superseded:
		// Either the client or a thief holds a newer token; we cannot tell
		// which, so neither keeps the grant.
		rt.grant.revoked = true
		return nil, errInvalidGrant("refresh token was already used; the grant is revoked")
	case rt.grant.jkt != "" && (pr == nil || pr.jkt != rt.grant.jkt):
		return nil, errInvalidGrant("refresh token is bound to a different DPoP key")
	}
	// RFC 6749 §6: an omitted scope means the grant's; a narrower one is
	// allowed for this access token only.
	scope := rt.grant.scope
	if requested := form.Get("scope"); requested != "" {
		var oerr *oauthError
		if scope, oerr = requestedScope(requested, strings.Fields(rt.grant.scope)); oerr != nil {
			return nil, oerr
		}
	}
	rt.superseded = true
	return p.issueLocked(rt.grant, scope, pr, time.Now()), nil
}

// clientCredentialsGrant serves RFC 6749 §4.4, for confidential clients only.
func (p *Provider) clientCredentialsGrant(form url.Values, pr *proof) (*tokenResponse, *oauthError) {
	if p.opts.ClientSecret == "" {
		return nil, &oauthError{status: http.StatusBadRequest, code: "unauthorized_client", description: "a public client may not use client_credentials"}
	}
	scope, oerr := requestedScope(form.Get("scope"), supportedScopes)
	if oerr != nil {
		return nil, oerr
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	g := &grant{subject: p.opts.ClientID, scope: scope}
	return p.issueLocked(g, scope, pr, time.Now()), nil
}

// requestedScope checks a space-separated scope against allowed and returns
// it in canonical order; an empty request means the default scope.
func requestedScope(requested string, allowed []string) (string, *oauthError) {
	fields := strings.Fields(requested)
	if len(fields) == 0 {
		fields = []string{defaultScope}
	}
	for _, s := range fields {
		if !slices.Contains(allowed, s) {
			return "", &oauthError{status: http.StatusBadRequest, code: "invalid_scope", description: "scope " + safeName(s) + " is not allowed"}
		}
	}
	slices.Sort(fields)
	return strings.Join(slices.Compact(fields), " "), nil
}
