package oauthtest

import (
	"errors"
	"net/http"
	"time"
)

// handleToken is the token endpoint (RFC 6749 §3.2).
func (p *Provider) handleToken(w http.ResponseWriter, r *http.Request) {
	form, oerr := readForm(w, r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	grantType := form.Get("grant_type")
	p.mu.Lock()
	p.requests[grantType]++
	p.mu.Unlock()

	if oerr := p.authenticateClient(r, form); oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	pr, oerr := p.tokenProof(r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	var resp *tokenResponse
	switch grantType {
	case "":
		oerr = errInvalidRequest("grant_type missing")
	case GrantDeviceCode:
		resp, oerr = p.deviceCodeGrant(form, pr)
	case GrantRefreshToken:
		resp, oerr = p.refreshGrant(form, pr)
	case GrantClientCredentials:
		resp, oerr = p.clientCredentialsGrant(form, pr)
	default:
		oerr = &oauthError{status: http.StatusBadRequest, code: "unsupported_grant_type", description: "grant_type is not supported"}
	}
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// tokenProof verifies the DPoP proof of a token request. It returns nil
// without error when there is none and none is required.
func (p *Provider) tokenProof(r *http.Request) (*proof, *oauthError) {
	values := r.Header.Values("DPoP")
	if len(values) == 0 {
		if p.opts.RequireDPoP {
			return nil, errInvalidProof("a DPoP proof is required")
		}
		return nil, nil
	}
	now := time.Now()
	pr, err := verifyProof(values, proofWant{method: http.MethodPost, uri: p.URL + "/token"}, now)
	if err != nil {
		return nil, errInvalidProof(proofReason(err))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	challenge, err := p.checkProofState(pr, p.tokenNonces, now)
	switch {
	case err != nil:
		return nil, errInvalidProof(proofReason(err))
	case challenge != "":
		return nil, &oauthError{status: http.StatusBadRequest, code: "use_dpop_nonce",
			description: "authorization server requires nonce in DPoP proof", dpopNonce: challenge}
	}
	return pr, nil
}

// proofReason is the text of a proofError; any other error gets fixed text.
func proofReason(err error) string {
	var pe *proofError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return "DPoP proof is invalid"
}
