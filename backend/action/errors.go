package action

import "errors"

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
