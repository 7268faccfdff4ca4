package action

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults from DESIGN.md.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 8 << 20
)

// Config tunes an Executor. Zero fields take the defaults.
type Config struct {
	Timeout          time.Duration
	MaxResponseBytes int64
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
	// TLSClientConfig is for tests that trust their own CA; nil in
	// production means the system roots.
	TLSClientConfig *tls.Config
}

// Executor performs HTTP actions. It is safe for concurrent use.
type Executor struct {
	cfg   Config
	pools pools
	// poolKey keys credentialID; it never leaves this Executor.
	poolKey [32]byte
}

// Response is what goes back to the agent, already redacted.
type Response struct {
	Status     int
	StatusText string
	Header     http.Header
	Body       []byte
	// Truncated says the body was cut at the response cap.
	Truncated      bool
	IdempotencyKey string
}

// New returns an Executor.
func New(cfg Config) *Executor {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.TLSClientConfig != nil {
		cfg.TLSClientConfig = cfg.TLSClientConfig.Clone()
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	e := &Executor{cfg: cfg}
	rand.Read(e.poolKey[:])
	e.pools = pools{byKey: map[poolKey]*pool{}, make: e.transport}
	return e
}

// transport makes the transport of one pool: it dials only the key's
// checked addresses and speaks HTTP/1.1, where a connection carries one
// request at a time and cancelling the request closes it.
func (e *Executor) transport(key poolKey) *http.Transport {
	return &http.Transport{
		Proxy:               nil, // never: a proxy would dial for us, unchecked
		DialContext:         dialChecked(parseAddrList(key.addrs), key.port, e.cfg.Timeout),
		TLSClientConfig:     e.cfg.TLSClientConfig,
		TLSHandshakeTimeout: e.cfg.Timeout,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // no HTTP/2
		DisableCompression:  true,                                                   // Yett asks for and decodes gzip itself
		// Enough kept for 16 agents calling one host at once: with 8, half
		// of their connections were closed after each request and dialed
		// again.
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// CloseIdleConnections closes every idle connection and forgets every
// pool, so no connection dialed before it serves a request after it.
// Connections of requests in flight close when those requests end (or at
// once, if their context is cancelled). The gateway calls it when the
// vault locks.
func (e *Executor) CloseIdleConnections() { e.pools.closeAll() }

// Do performs req, injecting cred when it is not nil. Errors wrap one of
// the package's sentinels and never contain the secret. A non-2xx status
// is not an error: it is returned in Response. An answer withheld because
// it could carry the secret is a *WithheldError (ErrResponseWithheld): the
// request was sent.
//
// Cancelling ctx while the request is in flight closes its connection.
func (e *Executor) Do(ctx context.Context, req Request, cred *Credential) (*Response, error) {
	var inj *Injection
	if cred != nil {
		if cred.Secret == nil {
			return nil, ErrNoSecret
		}
		inj = &cred.Injection
	}
	v, err := req.validate(inj)
	if err != nil {
		return nil, err
	}
	pol := policy{}
	if cred != nil {
		pol.allowInternal = cred.InternalHost || namesInternal(v.target.Host)
		if v.target.Scheme == "http" {
			if !isLoopbackHost(v.target.Host) && !cred.InternalHost {
				return nil, ErrInsecureScheme
			}
			pol.loopbackOnly = true
		}
	}
	if err := checkName(v.target.Host); err != nil {
		return nil, err
	}
	key := req.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	addrs, err := e.resolve(ctx, v, pol)
	if err != nil {
		return nil, err
	}
	pk := poolKey{policy: pol, scheme: v.target.Scheme, host: v.target.Host, port: v.target.Port, addrs: addrList(addrs)}
	if cred == nil {
		return e.send(ctx, v, key, pk, nil, nil)
	}
	var resp *Response
	err = cred.Secret.WithSecret(ctx, func(secret []byte) error {
		pk.credential = credentialID(e.poolKey[:], cred.Injection, secret)
		var err error
		resp, err = e.send(ctx, v, key, pk, &cred.Injection, secret)
		return err
	})
	if err != nil {
		if isOurs(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w", ErrNoSecret)
	}
	return resp, nil
}

// send builds, sends and reads one request on pk's pool. With a secret,
// every returned byte passes the redactor, and so does the error text.
func (e *Executor) send(ctx context.Context, v *validated, key string, pk poolKey, inj *Injection, secret []byte) (*Response, error) {
	var red *redactor
	if inj != nil {
		red = newRedactor(secret)
		defer red.wipe()
	}
	p := e.pools.acquire(pk)
	defer e.pools.release(p)
	hresp, err := e.roundTrip(ctx, p, v, key, inj, secret, "")
	if err != nil {
		return nil, transportError(err, red)
	}
	// RFC 9449 §9: a resource server that wants a DPoP nonce answers 401
	// use_dpop_nonce before doing anything, so the request is sent again
	// once with the nonce it gave.
	if inj != nil && inj.Format == InjectDPoP && hresp.StatusCode == http.StatusUnauthorized {
		if n := hresp.Header.Get("DPoP-Nonce"); n != "" && len(n) <= 512 &&
			strings.Contains(hresp.Header.Get("WWW-Authenticate"), "use_dpop_nonce") {
			io.Copy(io.Discard, io.LimitReader(hresp.Body, 64<<10))
			hresp.Body.Close()
			if hresp, err = e.roundTrip(ctx, p, v, key, inj, secret, n); err != nil {
				return nil, transportError(err, red)
			}
		}
	}
	defer hresp.Body.Close()
	// Read a little past the cap so a secret straddling it is still seen
	// whole by the redactor before the cut.
	limit := e.cfg.MaxResponseBytes + 1
	if red != nil {
		limit += int64(red.maxLen)
	}
	body, h, err := readBody(hresp, limit, inj != nil, v.header.Get("Accept-Encoding") == "")
	if err != nil {
		return nil, transportError(err, red)
	}
	truncated := int64(len(body)) > e.cfg.MaxResponseBytes
	body = red.bytes(body)
	if truncated {
		body = red.tail(body[:min(int64(len(body)), e.cfg.MaxResponseBytes)])
	}
	h.Del("Content-Length") // the body returned may differ: decoding, redaction, cap
	if inj != nil {
		// A session cookie from the bound host is a credential too.
		h.Del("Set-Cookie")
		h.Del("Set-Cookie2")
	}
	return &Response{
		Status:         hresp.StatusCode,
		StatusText:     red.string(http.StatusText(hresp.StatusCode)),
		Header:         red.header(h),
		Body:           body,
		Truncated:      truncated,
		IdempotencyKey: key,
	}, nil
}

// roundTrip builds and sends one request, injecting the credential.
func (e *Executor) roundTrip(ctx context.Context, p *pool, v *validated, key string, inj *Injection, secret []byte, nonce string) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, v.method, v.url.String(), bytes.NewReader(v.body))
	if err != nil {
		return nil, fmt.Errorf("%w: cannot build request", ErrInvalidRequest)
	}
	hreq.Header = v.header.Clone()
	hreq.Header.Set("Idempotency-Key", key)
	if hreq.Header.Get("Accept-Encoding") == "" {
		// Yett's own ask: the one encoding it decodes before redaction.
		hreq.Header.Set("Accept-Encoding", "gzip")
	}
	if inj != nil {
		wipe, err := inj.inject(hreq, secret, nonce)
		if err != nil {
			return nil, err
		}
		// The request's header value is gone from memory once the
		// exchange is over: headers are written before the answer comes,
		// and a credentialed request follows no redirect.
		resp, err := p.client.Do(hreq)
		if err != nil {
			wipe()
			return nil, err
		}
		resp.Body = &wipeOnClose{ReadCloser: resp.Body, wipe: wipe}
		return resp, nil
	}
	return p.client.Do(hreq)
}

// wipeOnClose clears the injected header value when the response body is
// closed: the request is fully written by then.
type wipeOnClose struct {
	io.ReadCloser
	wipe func()
}

func (w *wipeOnClose) Close() error {
	err := w.ReadCloser.Close()
	w.wipe()
	return err
}

// transportError maps a client error to a sentinel with redacted text.
func transportError(err error, red *redactor) error {
	if isOurs(err) {
		return unwrapOurs(err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout
	}
	return fmt.Errorf("%w: %s", ErrTransport, red.string(err.Error()))
}

var ours = []error{ErrInvalidRequest, ErrForbiddenHeader, ErrInsecureScheme, ErrForbiddenTarget, ErrTimeout, ErrTransport, ErrNoSecret, ErrResponseWithheld}

func isOurs(err error) bool { return unwrapOurs(err) != nil }

// unwrapOurs returns the first of our errors in err's chain, skipping the
// url.Error and net.OpError wrappers whose text repeats URLs and addresses.
func unwrapOurs(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch e.(type) {
		case *url.Error, *net.OpError:
			continue
		}
		for _, s := range ours {
			if errors.Is(e, s) {
				return e
			}
		}
	}
	return nil
}

func newIdempotencyKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
