package hydratest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// DenyConsent makes the consent handler reject every later consent request
// with error=access_denied (true) or accept it again (false).
func (h *Hydra) DenyConsent(deny bool) { h.denyConsent.Store(deny) }

// loginConsentHandler is the app Hydra sends the browser to (URLS_LOGIN,
// URLS_CONSENT). It asks nobody: it accepts the login as h.subject and grants
// everything the client asked for, unless DenyConsent is on.
func (h *Hydra) loginConsentHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		challenge := r.URL.Query().Get("login_challenge")
		var accepted redirect
		err := h.adminJSON(http.MethodPut, "/admin/oauth2/auth/requests/login/accept",
			url.Values{"login_challenge": {challenge}},
			map[string]any{"subject": h.subject, "remember": false}, &accepted)
		h.redirectOrFail(w, r, accepted, err)
	})
	mux.HandleFunc("GET /consent", func(w http.ResponseWriter, r *http.Request) {
		q := url.Values{"consent_challenge": {r.URL.Query().Get("consent_challenge")}}
		var next redirect
		var err error
		if h.denyConsent.Load() {
			err = h.adminJSON(http.MethodPut, "/admin/oauth2/auth/requests/consent/reject", q,
				map[string]any{"error": "access_denied", "error_description": "hydratest: consent denied"}, &next)
		} else {
			var req struct {
				RequestedScope    []string `json:"requested_scope"`
				RequestedAudience []string `json:"requested_access_token_audience"`
			}
			err = h.adminJSON(http.MethodGet, "/admin/oauth2/auth/requests/consent", q, nil, &req)
			if err == nil {
				err = h.adminJSON(http.MethodPut, "/admin/oauth2/auth/requests/consent/accept", q,
					map[string]any{
						"grant_scope":                 nonNil(req.RequestedScope),
						"grant_access_token_audience": nonNil(req.RequestedAudience),
						"remember":                    false,
					}, &next)
			}
		}
		h.redirectOrFail(w, r, next, err)
	})
	return mux
}

type redirect struct {
	RedirectTo string `json:"redirect_to"`
}

func (h *Hydra) redirectOrFail(w http.ResponseWriter, r *http.Request, next redirect, err error) {
	if err == nil && next.RedirectTo == "" {
		err = fmt.Errorf("hydra answered without redirect_to")
	}
	if err != nil {
		http.Error(w, "hydratest login/consent: "+err.Error(), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, next.RedirectTo, http.StatusFound)
}

// adminJSON calls Hydra's admin API with an optional JSON body and decodes a
// 2xx JSON answer into out. Error text holds Hydra's error body, which for
// these endpoints names the problem and never carries a token.
func (h *Hydra) adminJSON(method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := h.AdminURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.admin.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// unwrapURLError drops the request URL from a transport error: a URL can
// carry a challenge or an authorization code in its query.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// nonNil sends an absent list as JSON [] rather than null, so the grant says
// "nothing" explicitly.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
