package oauthtest

import (
	"net/http"
	"time"
)

// handleRevoke is RFC 7009 §2. Revoking a refresh token ends its grant and
// so every access token of it; revoking an access token ends only that one.
// Unknown tokens are answered with 200 too (§2.2), so the answer says
// nothing about which tokens exist.
func (p *Provider) handleRevoke(w http.ResponseWriter, r *http.Request) {
	token, ok := p.tokenForm(w, r)
	if !ok {
		return
	}
	// token_type_hint only orders a search that covers every type anyway.
	p.mu.Lock()
	if rt := p.refresh[token]; rt != nil {
		rt.grant.revoked = true
	} else if at := p.access[token]; at != nil {
		at.revoked = true
	}
	p.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// tokenForm reads a revocation or introspection request: an authenticated
// client and a token. On an error it has answered, and ok is false.
func (p *Provider) tokenForm(w http.ResponseWriter, r *http.Request) (token string, ok bool) {
	form, oerr := readForm(w, r)
	if oerr == nil {
		oerr = p.authenticateClient(r, form)
	}
	if oerr == nil && form.Get("token") == "" {
		oerr = errInvalidRequest("token missing")
	}
	if oerr != nil {
		writeOAuthError(w, oerr)
		return "", false
	}
	return form.Get("token"), true
}

// handleIntrospect is RFC 7662 §2.
func (p *Provider) handleIntrospect(w http.ResponseWriter, r *http.Request) {
	if token, ok := p.tokenForm(w, r); ok {
		writeJSON(w, http.StatusOK, p.introspect(token))
	}
}

func (p *Provider) introspect(token string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	inactive := map[string]any{"active": false}
	var g *grant
	var jkt string
	out := map[string]any{"active": true, "client_id": p.opts.ClientID}
	if at := p.access[token]; at != nil {
		if !at.active(now) {
			return inactive
		}
		g, jkt = at.grant, at.jkt
		out["scope"] = at.scope
		out["iat"] = at.issued.Unix()
		out["exp"] = at.expiry.Unix()
		out["token_type"] = "Bearer"
		if jkt != "" {
			out["token_type"] = "DPoP"
		}
	} else if rt := p.refresh[token]; rt != nil {
		if !rt.active() {
			return inactive
		}
		g, jkt = rt.grant, rt.grant.jkt
		out["scope"] = g.scope
		out["iat"] = rt.issued.Unix()
	} else {
		return inactive
	}
	out["sub"] = g.subject
	if jkt != "" {
		out["cnf"] = map[string]string{"jkt": jkt}
	}
	return out
}
