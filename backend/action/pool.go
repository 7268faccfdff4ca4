package action

import (
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// maxPools bounds how many keep-alive pools an Executor holds; the least
// recently used idle one goes first.
const maxPools = 64

// poolKey names the connections a request may reuse. A connection is
// dialed for one credential, under one address policy, to one set of
// checked addresses, for one scheme, TLS server name and port, and carries
// only requests with the same key: one credential's connection never
// carries another's request, and a name that now resolves elsewhere (or a
// policy that no longer allows an address) gets a new connection, checked
// again.
type poolKey struct {
	credential [sha256.Size]byte // credentialID; zero without a credential
	policy     policy
	scheme     string
	host       string // the URL's host: the TLS server name and Host header
	port       int
	addrs      string // the checked addresses, in dial order
}

// credentialID names a credential by its injection and secret, under a key
// that lives only in this Executor's memory: the same secret gets the same
// pools, another secret (a rotation, another credential) other ones.
func credentialID(key []byte, in Injection, secret []byte) [sha256.Size]byte {
	m := hmac.New(sha256.New, key)
	for _, part := range []string{string(in.Format), in.HeaderName, in.Template, in.Username} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	m.Write(secret)
	// A block of zeros pushes the secret's last bytes through the
	// compression function, so the hash's buffer, which the collector
	// frees but never clears, holds zeros rather than the secret.
	var zeros [sha256.BlockSize]byte
	m.Write(zeros[:])
	var id [sha256.Size]byte
	m.Sum(id[:0])
	return id
}

func addrList(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}

// pool is one key's transport (its idle connections) and its users.
type pool struct {
	client  *http.Client
	tr      *http.Transport
	users   int
	retired bool // dropped from the table: closes its connections when the last user leaves
	used    time.Time
}

// pools is the table of keep-alive pools.
type pools struct {
	mu    sync.Mutex
	byKey map[poolKey]*pool
	make  func(poolKey) *http.Transport
}

// acquire returns the pool for key, creating it, and counts a user; call
// release when the response body is closed.
func (ps *pools) acquire(key poolKey) *pool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.byKey[key]
	if p == nil {
		ps.evict()
		tr := ps.make(key)
		p = &pool{tr: tr, client: &http.Client{Transport: tr, CheckRedirect: neverFollow}}
		ps.byKey[key] = p
	}
	p.users++
	p.used = time.Now()
	return p
}

func (ps *pools) release(p *pool) {
	ps.mu.Lock()
	p.users--
	closeNow := p.retired && p.users == 0
	ps.mu.Unlock()
	if closeNow {
		p.tr.CloseIdleConnections()
	}
}

// evict makes room for one more pool. ps.mu held.
func (ps *pools) evict() {
	if len(ps.byKey) < maxPools {
		return
	}
	var oldKey poolKey
	var old *pool
	for k, p := range ps.byKey {
		if old == nil || p.used.Before(old.used) {
			oldKey, old = k, p
		}
	}
	delete(ps.byKey, oldKey)
	ps.retire(old)
}

// retire drops p: its idle connections close now, busy ones when their
// last user leaves. ps.mu held.
func (ps *pools) retire(p *pool) {
	p.retired = true
	if p.users == 0 {
		p.tr.CloseIdleConnections()
	}
}

// closeAll retires every pool and forgets their keys.
func (ps *pools) closeAll() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for k, p := range ps.byKey {
		delete(ps.byKey, k)
		ps.retire(p)
	}
}

// neverFollow: the executor follows no redirect. A credentialed request
// must not (the credential would go where no binding named); one without a
// credential gets the 3xx too, since the next hop would need its own
// address check.
func neverFollow(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func parseAddrList(s string) []netip.Addr {
	var out []netip.Addr
	for _, a := range strings.Split(s, ",") {
		if addr, err := netip.ParseAddr(a); err == nil {
			out = append(out, addr)
		}
	}
	return out
}
