package action

import (
	"errors"
	"fmt"
)

// Errors callers branch on; Do wraps them with a short, safe reason.
var (
	// ErrInvalidRequest: the agent's arguments are malformed.
	ErrInvalidRequest = errors.New("action: invalid request")
	// ErrForbiddenHeader: the agent tried to set a header only Yett sets.
	ErrForbiddenHeader = errors.New("action: header not allowed")
	// ErrInsecureScheme: a credential would travel over plain HTTP to a
	// non-loopback address.
	ErrInsecureScheme = errors.New("action: credentials require HTTPS except to loopback")
	// ErrForbiddenTarget: the target address is refused (metadata,
	// link-local, or private/loopback without a binding naming it).
	ErrForbiddenTarget = errors.New("action: target address not allowed")
	// ErrTimeout: the request did not finish within the timeout.
	ErrTimeout = errors.New("action: request timed out")
	// ErrTransport: the request failed on the network; the text is
	// redacted. Whether it reached the server is unknown.
	ErrTransport = errors.New("action: request failed")
	// ErrNoSecret: the SecretSource could not lend the secret (for
	// example, the vault locked).
	ErrNoSecret = errors.New("action: credential unavailable")
)

// ErrResponseWithheld: the request was sent and the server answered, but
// the executor withheld the answer because it could carry the credential in
// a form the redactor cannot see: a Content-Encoding the executor did not
// ask for (or could not decode), or a 206 partial answer. The error is a
// *WithheldError with the status and the reason.
var ErrResponseWithheld = errors.New("action: response withheld")

// Reasons of a WithheldError.
const (
	WithheldEncoded = "encoded_response"
	WithheldPartial = "partial_content"
)

// WithheldError says which answer was withheld and why. It carries no
// byte of the answer.
type WithheldError struct {
	Status int    // the server's status code
	Reason string // WithheldEncoded or WithheldPartial
}

func (e *WithheldError) Error() string {
	return fmt.Sprintf("action: response withheld (status %d, %s)", e.Status, e.Reason)
}

func (e *WithheldError) Unwrap() error { return ErrResponseWithheld }
