package oauth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"

	"github.com/yettdev/yett/backend/oauth/proof"
)

// Client authentication methods a connection may use.
const (
	ClientAuthNone          = "none"
	ClientAuthSecret        = "client_secret"
	ClientAuthPrivateKeyJWT = "private_key_jwt"
)

// tokenTransport adds what x/oauth2 does not send itself to requests for
// the provider's token, device, revocation and introspection endpoints: an
// RFC 7523 client assertion (private_key_jwt) and an RFC 9449 DPoP proof
// (with one retry when the provider asks for a nonce). It also notes
// whether a request was written completely, which tells a lost response
// from a request that never left.
type tokenTransport struct {
	base       http.RoundTripper
	m          *tokens
	clientID   string
	audience   string // the token endpoint: aud of client assertions
	clientKey  *proof.Key
	dpopKey    *proof.Key
	wrote      *atomic.Bool
	assertions bool
	// resource is the RFC 8707 resource indicator added to every token
	// request (a code exchange, a refresh, client credentials); "" for
	// none.
	resource string
}

const maxFormBytes = 1 << 20

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var form []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxFormBytes+1))
		req.Body.Close()
		if err != nil || len(b) > maxFormBytes {
			return nil, fmt.Errorf("oauth: token request body unreadable")
		}
		form = b
	}
	if (t.clientKey != nil || t.resource != "") && req.Method == http.MethodPost {
		vals, err := url.ParseQuery(string(form))
		if err != nil {
			return nil, fmt.Errorf("oauth: token request form unreadable")
		}
		if t.clientKey != nil {
			a, err := t.clientKey.ClientAssertion(t.clientID, t.audience, t.m.now(), time.Minute)
			if err != nil {
				return nil, fmt.Errorf("oauth: signing the client assertion failed")
			}
			vals.Set("client_assertion_type", proof.ClientAssertionType)
			vals.Set("client_assertion", a)
			vals.Set("client_id", t.clientID)
		}
		if t.resource != "" && vals.Has("grant_type") && req.URL.String() == t.audience {
			vals.Set("resource", t.resource)
		}
		form = []byte(vals.Encode())
	}
	resp, err := t.send(req, form, "")
	if err != nil || t.dpopKey == nil {
		return resp, err
	}
	// RFC 9449 §8: a 400 use_dpop_nonce answer carries the nonce to use; the
	// provider did not process the request, so sending it again is safe.
	if n := resp.Header.Get("DPoP-Nonce"); n != "" && resp.StatusCode == http.StatusBadRequest && isNonceError(resp) {
		t.m.tokens.setNonce(req.URL, n)
		return t.send(req, form, n)
	}
	if n := resp.Header.Get("DPoP-Nonce"); n != "" {
		t.m.tokens.setNonce(req.URL, n)
	}
	return resp, nil
}

func (t *tokenTransport) send(req *http.Request, form []byte, nonce string) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(form))
	r.ContentLength = int64(len(form))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(form)), nil }
	if t.dpopKey != nil {
		if nonce == "" {
			nonce = t.m.tokens.nonce(req.URL)
		}
		p, err := t.dpopKey.DPoPProof(r.Method, r.URL.String(), "", nonce, t.m.now())
		if err != nil {
			return nil, fmt.Errorf("oauth: signing the DPoP proof failed")
		}
		r.Header.Set("DPoP", p)
	}
	if t.wrote != nil {
		w := t.wrote
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				if info.Err == nil {
					w.Store(true)
				}
			},
		}))
	}
	return t.base.RoundTrip(r)
}

// isNonceError peeks at a 400 answer's error code and puts the body back.
func isNonceError(resp *http.Response) bool {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return strings.Contains(string(b), `"use_dpop_nonce"`)
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func (m *tokens) nonce(u *url.URL) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nonces[origin(u)]
}

func (m *tokens) setNonce(u *url.URL, n string) {
	if len(n) > 512 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nonces[origin(u)] = n
}

// tokenContext returns ctx carrying the HTTP client x/oauth2 uses for r's
// token endpoint.
func (m *tokens) tokenContext(ctx context.Context, r *row, wrote *atomic.Bool) (context.Context, error) {
	tr := &tokenTransport{base: m.baseTransport(), m: m, clientID: r.ClientID, audience: r.TokenEndpoint, wrote: wrote, resource: r.Resource}
	if r.ClientAuth == ClientAuthPrivateKeyJWT {
		k, err := m.loadKey(r.ClientKeyID)
		if err != nil {
			return nil, err
		}
		tr.clientKey = k
	}
	if r.DPoP {
		k, err := m.loadKey(dpopKeyID(r.ID))
		if err != nil {
			return nil, err
		}
		tr.dpopKey = k
	}
	c := &http.Client{Transport: tr, Timeout: m.http.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return context.WithValue(ctx, oauth2.HTTPClient, c), nil
}

func (m *tokens) baseTransport() http.RoundTripper {
	if m.http.Transport != nil {
		return m.http.Transport
	}
	return http.DefaultTransport
}

// config builds r's x/oauth2 configuration with its AuthStyle set
// explicitly: auto-detection resends a failed token request with the other
// style, and a resent refresh can trip reuse detection.
func (m *tokens) config(r *row, redirect string) (*oauth2.Config, error) {
	c := &oauth2.Config{
		ClientID: r.ClientID,
		Endpoint: oauth2.Endpoint{
			AuthURL: r.AuthorizationEndpoint, TokenURL: r.TokenEndpoint, DeviceAuthURL: r.DeviceEndpoint,
			AuthStyle: oauth2.AuthStyle(r.AuthStyle),
		},
		RedirectURL: redirect,
		Scopes:      splitScopes(r.RequestedScopes),
	}
	if c.Endpoint.AuthStyle == oauth2.AuthStyleAutoDetect {
		return nil, fmt.Errorf("%w: the client authentication style is not set", ErrConfig)
	}
	if r.ClientAuth == ClientAuthSecret {
		s, err := m.vault.OpenBlob(purposeClient, tokenAD(r.ID, "client_secret", 0), r.SealedClientSecret)
		if err != nil {
			return nil, fmt.Errorf("oauth: the client secret cannot be read: %w", err)
		}
		c.ClientSecret = string(s)
		clear(s)
	}
	return c, nil
}
