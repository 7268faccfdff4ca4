package action

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const canary = "CANARY-yett-7f3c9a1e5b"

// secretSource lends a fixed secret, as the vault would.
type secretSource struct {
	secret string
	err    error
}

func (s secretSource) WithSecret(_ context.Context, use func([]byte) error) error {
	if s.err != nil {
		return s.err
	}
	b := []byte(s.secret)
	defer clear(b)
	return use(b)
}

// mapResolver answers from a table, counting lookups.
type mapResolver struct {
	mu    sync.Mutex
	m     map[string][]netip.Addr
	calls map[string]int
	// next, when set, answers instead of m (rebinding games).
	next func(host string, call int) []netip.Addr
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[host]++
	if r.next != nil {
		return r.next(host, r.calls[host]), nil
	}
	if a, ok := r.m[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// recorder is a handler that records what arrived.
type recorder struct {
	hits    atomic.Int32
	mu      sync.Mutex
	headers []http.Header
	paths   []string
	handle  func(w http.ResponseWriter, r *http.Request)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.hits.Add(1)
	rec.mu.Lock()
	rec.headers = append(rec.headers, r.Header.Clone())
	rec.paths = append(rec.paths, r.URL.Path)
	rec.mu.Unlock()
	if rec.handle != nil {
		rec.handle(w, r)
		return
	}
	w.Write([]byte("ok"))
}

func (rec *recorder) last() http.Header {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.headers) == 0 {
		return nil
	}
	return rec.headers[len(rec.headers)-1]
}

// tlsServer starts an HTTPS server on 127.0.0.1 (its certificate covers
// example.com) and an Executor that trusts it and resolves example.com
// to it.
func tlsServer(t *testing.T, rec *recorder, cfg Config) (*httptest.Server, *Executor, *mapResolver) {
	t.Helper()
	srv := httptest.NewTLSServer(rec)
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	res := &mapResolver{m: map[string][]netip.Addr{"example.com": addrs("127.0.0.1")}}
	if cfg.Resolver == nil {
		cfg.Resolver = res
	}
	cfg.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.TLSClientConfig.RootCAs = pool
	return srv, New(cfg), res
}

func port(srv *httptest.Server) string { return srv.URL[strings.LastIndex(srv.URL, ":")+1:] }

func bearer() *Credential {
	return &Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: canary}, InternalHost: true}
}

// assertNoCanary fails if any form of the canary is in s.
func assertNoCanary(t *testing.T, where, s string) {
	t.Helper()
	for _, form := range []string{canary, "Q0FOQVJZLXlldHQtN2YzYzlhMWU1Yg", "CANARY-yett"} {
		if strings.Contains(s, form) {
			t.Errorf("%s leaks the secret (%q): %q", where, form, s)
		}
	}
}

// exURL is https://example.com:<port of srv><path>.
func exURL(srv *httptest.Server, path string) string {
	return "https://example.com:" + port(srv) + path
}
