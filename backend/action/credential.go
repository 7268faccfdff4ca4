package action

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"unsafe"

	"golang.org/x/net/http/httpguts"
)

// InjectionFormat says how the secret goes into the request; the values
// are those of the vault's credentials.
type InjectionFormat string

const (
	InjectBearer InjectionFormat = "bearer" // Authorization: Bearer <secret>
	InjectHeader InjectionFormat = "header" // <HeaderName>: Template with {secret} replaced
	InjectBasic  InjectionFormat = "basic"  // Authorization: Basic base64(Username:secret)
	// InjectDPoP sends a DPoP-bound access token (RFC 9449 §7.1):
	// Authorization: DPoP <secret>, with a fresh proof from Proof in the
	// DPoP header.
	InjectDPoP InjectionFormat = "dpop"
)

// ProofFunc signs a DPoP proof for one request: method, URL, the access
// token (for the ath claim) and the server's nonce ("" for none yet).
type ProofFunc func(method, url string, accessToken []byte, nonce string) (string, error)

// SecretPlaceholder is replaced by the secret in a header template.
const SecretPlaceholder = "{secret}"

// Injection describes how the secret is injected.
type Injection struct {
	Format     InjectionFormat
	HeaderName string    // InjectHeader only
	Template   string    // InjectHeader only; empty means "{secret}"
	Username   string    // InjectBasic only
	Proof      ProofFunc // InjectDPoP only
}

// SecretSource lends a credential's secret for one request. The vault
// implements it; use must not keep the slice after it returns, and the
// source may wipe it then. An error (for example, the vault locked in the
// meantime) aborts the request before anything is sent.
type SecretSource interface {
	WithSecret(ctx context.Context, use func(secret []byte) error) error
}

// Credential is what the gateway chose for a request from the vault's
// host and path bindings. The gateway passes one only when the binding
// matched the request URL's host and path.
type Credential struct {
	Injection Injection
	Secret    SecretSource
	// InternalHost says the person bound the credential to a host that
	// resolves to private or loopback addresses, so dialing those is
	// allowed. A binding to a private or loopback IP literal, or to
	// "localhost", names such a target by itself and needs no flag.
	InternalHost bool
}

// inject sets the credential on req. The redactor finds the secret in any
// of the injected forms (the header value holds it as text, Basic as base64
// at some alignment), so inject returns none of them.
//
// The header value is built in memory inject owns and returned as a
// string over it (unsafe.String): the caller wipes it (the returned
// function) once the response is read, so the value does not stay in the
// heap as an immutable string until the collector reuses its memory. A
// string made with + or string(secret) could never be cleared: one call
// left six copies of the secret in yett serve's heap.
func (in Injection) inject(req *http.Request, secret []byte, nonce string) (wipe func(), err error) {
	h := req.Header
	if len(secret) == 0 {
		return nil, fmt.Errorf("%w: empty secret", ErrNoSecret)
	}
	var owned []byte
	wipe = func() { clear(owned) }
	name := "Authorization"
	switch in.Format {
	case InjectBearer:
		owned = append(append(make([]byte, 0, len("Bearer ")+len(secret)), "Bearer "...), secret...)
	case InjectDPoP:
		if in.Proof == nil {
			return nil, fmt.Errorf("%w: no DPoP proof signer", ErrInvalidRequest)
		}
		p, err := in.Proof(req.Method, req.URL.String(), secret, nonce)
		if err != nil {
			return nil, fmt.Errorf("%w: the DPoP proof could not be signed", ErrNoSecret)
		}
		owned = append(append(make([]byte, 0, len("DPoP ")+len(secret)), "DPoP "...), secret...)
		h.Set("DPoP", p)
	case InjectBasic:
		pair := append(append(append(make([]byte, 0, len(in.Username)+1+len(secret)), in.Username...), ':'), secret...)
		owned = make([]byte, len("Basic ")+base64.StdEncoding.EncodedLen(len(pair)))
		copy(owned, "Basic ")
		base64.StdEncoding.Encode(owned[len("Basic "):], pair)
		clear(pair)
	case InjectHeader:
		if !httpguts.ValidHeaderFieldName(in.HeaderName) {
			return nil, fmt.Errorf("%w: credential header name is not valid", ErrInvalidRequest)
		}
		tmpl := in.Template
		if tmpl == "" {
			tmpl = SecretPlaceholder
		}
		if !strings.Contains(tmpl, SecretPlaceholder) {
			return nil, fmt.Errorf("%w: credential template lacks %s", ErrInvalidRequest, SecretPlaceholder)
		}
		owned = bytes.ReplaceAll([]byte(tmpl), []byte(SecretPlaceholder), secret)
		name = in.HeaderName
	default:
		return nil, fmt.Errorf("%w: unknown injection format", ErrInvalidRequest)
	}
	value := unsafe.String(unsafe.SliceData(owned), len(owned))
	if !httpguts.ValidHeaderFieldValue(value) {
		// Never echo the value: it holds the secret.
		wipe()
		return nil, fmt.Errorf("%w: secret cannot be sent in a header", ErrNoSecret)
	}
	h.Set(name, value)
	return wipe, nil
}
