package action

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/yettdev/yett/backend/target"
)

// Request is what the agent asks for, as the http.request tool's arguments.
type Request struct {
	Method string
	URL    string
	// Params are added to the URL's query.
	Params  map[string]string
	Headers map[string]string
	Body    []byte
	// IdempotencyKey names the logical action; the gateway sets it (and
	// reuses it on an authorised retry). Empty: Do creates one.
	IdempotencyKey string
}

// maxHeaders and maxHeaderValue bound what one request may carry in its
// head (target.MaxLen bounds the URL).
const (
	maxHeaders     = 64
	maxHeaderValue = 8 << 10
)

var allowedMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// neverFromAgent are headers the agent may not set on any request: they
// carry credentials, steer routing, or belong to the connection (RFC 9110
// §7.6.1 hop-by-hop), or are set by the executor.
var neverFromAgent = map[string]bool{
	"Authorization": true, "Proxy-Authorization": true, "Host": true,
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Te": true,
	"Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Proxy-Authenticate": true,
	"Content-Length": true, "Idempotency-Key": true,
	"Forwarded": true, "X-Forwarded-For": true, "X-Forwarded-Host": true, "X-Forwarded-Proto": true,
}

// neverOnCredentialed are headers the agent may not set on a credentialed
// request: they decide the encoding or the part of the answer, and an
// encoded or partial reflection of the credential passes the redactor.
// Yett asks for the one encoding it decodes (gzip) itself.
var neverOnCredentialed = map[string]bool{
	"Cookie": true, "Accept-Encoding": true, "Range": true, "If-Range": true,
}

// validated is a Request that passed the argument checks.
type validated struct {
	method string
	target target.URL
	url    *url.URL // target with the agent's params, as sent
	header http.Header
	body   []byte
}

// validate checks the agent's arguments. cred is nil for a request without
// a credential; with one, the headers of neverOnCredentialed and the
// credential's header are refused too. Errors wrap ErrInvalidRequest or
// ErrForbiddenHeader and name the offending part, never its value.
func (r Request) validate(cred *Injection) (*validated, error) {
	// Agents write "get" as often as "GET"; the standard methods are
	// upper case on the wire.
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	if !allowedMethods[method] {
		return nil, fmt.Errorf("%w: method must be one of GET HEAD POST PUT PATCH DELETE OPTIONS", ErrInvalidRequest)
	}
	// One reader of the URL for the gateway, the vault's bindings and the
	// executor: what was matched is what is sent.
	t, err := target.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidRequest, strings.TrimPrefix(err.Error(), target.ErrInvalid.Error()+": "))
	}
	u, err := url.Parse(t.String())
	if err != nil {
		return nil, fmt.Errorf("%w: URL does not parse", ErrInvalidRequest) // cannot happen: t.String() parses
	}
	if len(r.Params) > 0 {
		q := u.Query()
		for k, v := range r.Params {
			q.Add(k, v)
		}
		u.RawQuery = q.Encode()
	}
	h, err := agentHeaders(r.Headers, cred)
	if err != nil {
		return nil, err
	}
	return &validated{method: method, target: t, url: u, header: h, body: r.Body}, nil
}

func agentHeaders(in map[string]string, cred *Injection) (http.Header, error) {
	if len(in) > maxHeaders {
		return nil, fmt.Errorf("%w: too many headers", ErrInvalidRequest)
	}
	h := http.Header{}
	for name, value := range in {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("%w: header name is not a valid token", ErrInvalidRequest)
		}
		if len(value) > maxHeaderValue || !httpguts.ValidHeaderFieldValue(value) {
			return nil, fmt.Errorf("%w: value of header %s is not valid", ErrInvalidRequest, name)
		}
		canon := http.CanonicalHeaderKey(name)
		if _, twice := h[canon]; twice {
			return nil, fmt.Errorf("%w: header %s is given twice (names differ only in case)", ErrInvalidRequest, canon)
		}
		if neverFromAgent[canon] {
			return nil, fmt.Errorf("%w: %s is set by Yett only", ErrForbiddenHeader, canon)
		}
		if cred != nil {
			if neverOnCredentialed[canon] {
				return nil, fmt.Errorf("%w: %s is not allowed on a credentialed request", ErrForbiddenHeader, canon)
			}
			if cred.HeaderName != "" && canon == http.CanonicalHeaderKey(cred.HeaderName) {
				return nil, fmt.Errorf("%w: %s carries the credential", ErrForbiddenHeader, canon)
			}
		}
		h.Set(canon, value)
	}
	return h, nil
}
