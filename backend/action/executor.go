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
	cfg    Config
	client *http.Client
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
	d := &dialer{resolver: cfg.Resolver, timeout: cfg.Timeout}
	tr := &http.Transport{
		Proxy:                  nil, // never: a proxy would dial for us, unchecked
		DialContext:            d.DialContext,
		TLSClientConfig:        cfg.TLSClientConfig,
		TLSHandshakeTimeout:    cfg.Timeout,
		DisableKeepAlives:      true, // a pooled conn dialed under one policy must not serve another
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: 1 << 20,
	}
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if credentialed(req.Context()) {
				return http.ErrUseLastResponse
			}
			if len(via) >= 5 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	return &Executor{cfg: cfg, client: client}
}

type credentialedKey struct{}

func credentialed(ctx context.Context) bool { v, _ := ctx.Value(credentialedKey{}).(bool); return v }

// Do performs req, injecting cred when it is not nil. Errors wrap one of
// the package's sentinels and never contain the secret. A non-2xx status
// is not an error: it is returned in Response.
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
		pol.allowInternal = cred.InternalHost || namesInternal(v.host)
		if v.url.Scheme == "http" {
			if !isLoopbackHost(v.host) && !cred.InternalHost {
				return nil, ErrInsecureScheme
			}
			pol.loopbackOnly = true
		}
	}
	if err := checkName(v.host); err != nil {
		return nil, err
	}
	key := req.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	ctx = context.WithValue(ctx, policyKey{}, pol)
	if cred == nil {
		return e.send(ctx, v, key, nil, nil)
	}
	ctx = context.WithValue(ctx, credentialedKey{}, true)
	var resp *Response
	err = cred.Secret.WithSecret(ctx, func(secret []byte) error {
		var err error
		resp, err = e.send(ctx, v, key, &cred.Injection, secret)
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

// send builds, sends and reads one request. With a secret, every returned
// byte passes the redactor, and so does the error text.
func (e *Executor) send(ctx context.Context, v *validated, key string, inj *Injection, secret []byte) (*Response, error) {
	hresp, red, err := e.roundTrip(ctx, v, key, inj, secret, "")
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
			if hresp, red, err = e.roundTrip(ctx, v, key, inj, secret, n); err != nil {
				return nil, transportError(err, red)
			}
		}
	}
	defer hresp.Body.Close()
	// Read a little past the cap so a secret straddling it is still seen
	// whole by the redactor before the cut.
	extra := int64(0)
	if red != nil {
		extra = int64(red.maxLen)
	}
	body, err := io.ReadAll(io.LimitReader(hresp.Body, e.cfg.MaxResponseBytes+1+extra))
	if err != nil {
		return nil, transportError(err, red)
	}
	truncated := int64(len(body)) > e.cfg.MaxResponseBytes
	body = red.bytes(body)
	if truncated {
		body = red.tail(body[:min(int64(len(body)), e.cfg.MaxResponseBytes)])
	}
	h := hresp.Header.Clone()
	h.Del("Content-Length") // the body returned may differ: redaction, cap
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
func (e *Executor) roundTrip(ctx context.Context, v *validated, key string, inj *Injection, secret []byte, nonce string) (*http.Response, *redactor, error) {
	hreq, err := http.NewRequestWithContext(ctx, v.method, v.url.String(), bytes.NewReader(v.body))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: cannot build request", ErrInvalidRequest)
	}
	hreq.Header = v.header.Clone()
	hreq.Header.Set("Idempotency-Key", key)
	var red *redactor
	if inj != nil {
		forms, err := inj.inject(hreq, secret, nonce)
		if err != nil {
			return nil, nil, err
		}
		red = newRedactor(forms)
	}
	hresp, err := e.client.Do(hreq)
	return hresp, red, err
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

var ours = []error{ErrInvalidRequest, ErrForbiddenHeader, ErrInsecureScheme, ErrForbiddenTarget, ErrTimeout, ErrTransport, ErrNoSecret}

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
