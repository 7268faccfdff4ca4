package hydratest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

const maxTokenRequestBody = 1 << 20

// Counter is a reverse proxy in front of Hydra's public port that counts the
// requests to /oauth2/token, for tests that must prove how many token
// requests reached the provider. It keeps hashes of the refresh tokens
// presented; the tokens Hydra issued it keeps in memory (Issued), for a
// test to ask Hydra about, and never prints.
type Counter struct {
	URL string // base URL of the proxy; its token endpoint is URL+"/oauth2/token"

	mu        sync.Mutex
	byGrant   map[string]int
	presented []string
	issued    []Issued
	hook      func(grantType string)
	respHook  func(grantType string, status int)
}

// Issued is a token Hydra issued through a Counter.
type Issued struct {
	Grant string // the request's grant_type
	Hint  string // access_token or refresh_token
	Value string
}

type grantTypeKey struct{}

// CountingProxy starts a Counter on 127.0.0.1 for h.PublicURL and stops it
// in t.Cleanup. Everything else on the public port passes through unchanged.
func (h *Hydra) CountingProxy(t testing.TB) *Counter {
	t.Helper()
	target, err := url.Parse(h.PublicURL)
	if err != nil {
		t.Fatalf("hydratest: counting proxy: %v", err)
	}
	c := &Counter{byGrant: map[string]int{}}
	tr := &http.Transport{}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: tr,
		ModifyResponse: func(resp *http.Response) error {
			if gt, ok := resp.Request.Context().Value(grantTypeKey{}).(string); ok && resp.StatusCode == http.StatusOK {
				body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenRequestBody))
				resp.Body.Close()
				if err != nil {
					return err
				}
				resp.Body = io.NopCloser(bytes.NewReader(body))
				var t struct {
					Access  string `json:"access_token"`
					Refresh string `json:"refresh_token"`
				}
				if json.Unmarshal(body, &t) == nil {
					c.mu.Lock()
					if t.Access != "" {
						c.issued = append(c.issued, Issued{gt, "access_token", t.Access})
					}
					if t.Refresh != "" {
						c.issued = append(c.issued, Issued{gt, "refresh_token", t.Refresh})
					}
					c.mu.Unlock()
				}
			}
			if gt, ok := resp.Request.Context().Value(grantTypeKey{}).(string); ok {
				if hook := c.responseHook(); hook != nil {
					hook(gt, resp.StatusCode)
				}
			}
			return nil
		},
		// The default handler logs the outbound URL; say less.
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "hydratest proxy: upstream failed", http.StatusBadGateway)
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth2/token" {
			var ok bool
			if r, ok = c.count(w, r); !ok {
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	c.URL = srv.URL
	return c
}

// count reads the token request's form, records it, runs the hook and
// returns the request with its body restored for Hydra.
func (c *Counter) count(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTokenRequestBody+1))
	r.Body.Close()
	if err != nil {
		http.Error(w, "hydratest proxy: reading the request", http.StatusBadRequest)
		return nil, false
	}
	if len(body) > maxTokenRequestBody {
		http.Error(w, "hydratest proxy: request body over 1 MiB", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	// A body that is not a form still goes to Hydra, counted under "".
	form, _ := url.ParseQuery(string(body))
	gt := form.Get("grant_type")
	c.mu.Lock()
	c.byGrant[gt]++
	if rt := form.Get("refresh_token"); rt != "" {
		c.presented = append(c.presented, HashToken(rt))
	}
	hook := c.hook
	c.mu.Unlock()
	if hook != nil {
		hook(gt)
	}
	r = r.WithContext(context.WithValue(r.Context(), grantTypeKey{}, gt))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.TransferEncoding = nil
	return r, true
}

// TokenRequests returns how many requests reached /oauth2/token, by
// grant_type ("" for a request without one).
func (c *Counter) TokenRequests() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.byGrant))
	for k, v := range c.byGrant {
		m[k] = v
	}
	return m
}

// RefreshTokensPresented returns the hex SHA-256 of every refresh_token form
// value sent to /oauth2/token, in arrival order. Compare with [HashToken].
func (c *Counter) RefreshTokensPresented() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.presented...)
}

// Issued returns every token Hydra issued through the proxy, in order.
func (c *Counter) Issued() []Issued {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Issued(nil), c.issued...)
}

// SetHook sets a function called with the grant type of each token request
// after it is counted and before it is forwarded; a test may block in it to
// hold the request back. nil removes it.
func (c *Counter) SetHook(f func(grantType string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hook = f
}

// SetResponseHook sets a function called after Hydra answered a token
// request and before the answer is written back to the client, e.g. to kill
// the client at exactly that moment. nil removes it.
func (c *Counter) SetResponseHook(f func(grantType string, status int)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.respHook = f
}

func (c *Counter) responseHook() func(string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.respHook
}

// HashToken is the hex SHA-256 that RefreshTokensPresented records for a
// token, so a test can compare without keeping or printing values.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
