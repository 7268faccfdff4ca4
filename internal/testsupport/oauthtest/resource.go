package oauthtest

import (
	"net/http"
	"strings"
	"time"
)

// handleResource is a protected API (RFC 6750 for bearer tokens, RFC 9449
// §7 for DPoP-bound ones). It answers {"sub", "scope", "dpop"} for any
// method, so a proof's htm can be tested against GET and POST alike.
func (p *Provider) handleResource(w http.ResponseWriter, r *http.Request) {
	scheme, token, ok := parseAuthorization(r.Header.Get("Authorization"))
	if !ok {
		w.Header().Add("WWW-Authenticate", `Bearer realm="oauthtest"`)
		w.Header().Add("WWW-Authenticate", `DPoP algs="`+dpopAlg+`"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_request"})
		return
	}
	now := time.Now()
	p.mu.Lock()
	at := p.access[token]
	active := at != nil && at.active(now)
	var jkt, scope, sub string
	if active {
		jkt, scope, sub = at.jkt, at.scope, at.grant.subject
	}
	p.mu.Unlock()

	switch {
	case !active:
		refuse(w, scheme, "invalid_token", "the access token is not active", "")
		return
	case scheme == "Bearer" && jkt != "":
		// RFC 9449 §7.2: accepting it would turn the bound token back
		// into a bearer token anyone holding it could use.
		refuse(w, "DPoP", "invalid_token", "a DPoP-bound token must be sent with the DPoP scheme", "")
		return
	case scheme == "DPoP" && jkt == "":
		refuse(w, "DPoP", "invalid_token", "the access token is not DPoP-bound", "")
		return
	case scheme == "DPoP":
		want := proofWant{method: r.Method, uri: p.URL + r.URL.EscapedPath(), accessToken: token}
		pr, err := verifyProof(r.Header.Values("DPoP"), want, now)
		if err == nil && pr.jkt != jkt {
			err = badProof("key does not match the access token's cnf.jkt")
		}
		if err != nil {
			refuse(w, "DPoP", "invalid_dpop_proof", proofReason(err), "")
			return
		}
		p.mu.Lock()
		challenge, err := p.checkProofState(pr, p.resourceNonces, now)
		p.mu.Unlock()
		switch {
		case err != nil:
			refuse(w, "DPoP", "invalid_dpop_proof", proofReason(err), "")
			return
		case challenge != "":
			refuse(w, "DPoP", "use_dpop_nonce", "resource server requires nonce in DPoP proof", challenge)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sub": sub, "scope": scope, "dpop": scheme == "DPoP"})
}

// parseAuthorization splits "Bearer x" or "DPoP x"; the scheme is matched
// case-insensitively (RFC 9110 §11.1) and returned in canonical case.
func parseAuthorization(h string) (scheme, token string, ok bool) {
	s, token, found := strings.Cut(h, " ")
	if !found || token == "" || strings.ContainsAny(token, " \t") {
		return "", "", false
	}
	switch {
	case strings.EqualFold(s, "Bearer"):
		return "Bearer", token, true
	case strings.EqualFold(s, "DPoP"):
		return "DPoP", token, true
	}
	return "", "", false
}

// refuse answers 401 with an RFC 6750 §3 / RFC 9449 §7.1 challenge. desc is
// chosen text without quotes.
func refuse(w http.ResponseWriter, scheme, code, desc, nonce string) {
	challenge := scheme + ` error="` + code + `", error_description="` + desc + `"`
	if scheme == "DPoP" {
		challenge += `, algs="` + dpopAlg + `"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	if nonce != "" {
		w.Header().Set("DPoP-Nonce", nonce)
	}
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": code, "error_description": desc})
}
