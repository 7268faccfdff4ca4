package oauthtest

import (
	"crypto/subtle"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// maxFormBytes bounds a request body; no legitimate request here comes close.
const maxFormBytes = 64 << 10

// oauthError is an RFC 6749 §5.2 error response. description is chosen text
// and never contains a token or a secret from the request.
type oauthError struct {
	status      int
	code        string
	description string
	dpopNonce   string // sent as DPoP-Nonce with use_dpop_nonce
	basicRealm  bool   // 401 invalid_client after an Authorization header
}

func errInvalidRequest(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_request", description: desc}
}

func errInvalidGrant(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_grant", description: desc}
}

func errInvalidProof(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_dpop_proof", description: desc}
}

func writeOAuthError(w http.ResponseWriter, e *oauthError) {
	if e.dpopNonce != "" {
		w.Header().Set("DPoP-Nonce", e.dpopNonce)
	}
	if e.basicRealm {
		w.Header().Set("WWW-Authenticate", `Basic realm="oauthtest"`)
	}
	writeJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.description})
}

// writeJSON writes v with the no-store caching RFC 6749 §5.1 requires of
// anything that may carry a token.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readForm returns the body parameters of a POST, refusing repeated ones
// (RFC 6749 §3.1) and ignoring the query string.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *oauthError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return nil, &oauthError{status: http.StatusMethodNotAllowed, code: "invalid_request", description: "use POST"}
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/x-www-form-urlencoded" {
		return nil, errInvalidRequest("body must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return nil, errInvalidRequest("body is not a valid form")
	}
	for name, vals := range r.PostForm {
		if len(vals) > 1 {
			return nil, errInvalidRequest("parameter " + safeName(name) + " is repeated")
		}
	}
	return r.PostForm, nil
}

// safeName quotes a parameter name for an error description, cut short so a
// hostile name cannot fill the response.
func safeName(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}

// authenticateClient applies RFC 6749 §2.3 for the one configured client.
// A public client sends only client_id; a confidential one must use
// client_secret_basic, whose id and secret are form-urlencoded (§2.3.1).
func (p *Provider) authenticateClient(r *http.Request, form url.Values) *oauthError {
	invalid := func(desc string) *oauthError {
		return &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: desc, basicRealm: p.opts.ClientSecret != ""}
	}
	if form.Has("client_secret") {
		return invalid("client_secret_post is not supported")
	}
	user, pass, hasBasic := r.BasicAuth()
	if p.opts.ClientSecret == "" {
		if r.Header.Get("Authorization") != "" {
			return &oauthError{status: http.StatusBadRequest, code: "invalid_client", description: "public client must not send credentials (token_endpoint_auth_method none)"}
		}
		if form.Get("client_id") != p.opts.ClientID {
			return &oauthError{status: http.StatusBadRequest, code: "invalid_client", description: "unknown client_id"}
		}
		return nil
	}
	if !hasBasic {
		return invalid("client_secret_basic required")
	}
	id, err1 := url.QueryUnescape(user)
	secret, err2 := url.QueryUnescape(pass)
	if err1 != nil || err2 != nil {
		return invalid("credentials are not form-urlencoded")
	}
	idOK := subtle.ConstantTimeCompare([]byte(id), []byte(p.opts.ClientID)) == 1
	secretOK := subtle.ConstantTimeCompare([]byte(secret), []byte(p.opts.ClientSecret)) == 1
	if !idOK || !secretOK {
		return invalid("client authentication failed")
	}
	if form.Has("client_id") && form.Get("client_id") != p.opts.ClientID {
		return invalid("client_id does not match the authenticated client")
	}
	return nil
}
