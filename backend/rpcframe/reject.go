package rpcframe

import (
	"encoding/json"
	"errors"
)

// Reasons a frame is rejected. A Rejection's Reason wraps exactly one of
// these, so callers (the gateway's audit, tests) can branch with errors.Is.
var (
	ErrFrameTooLarge  = errors.New("rpcframe: frame exceeds the size limit")
	ErrMalformed      = errors.New("rpcframe: malformed JSON")
	ErrTooDeep        = errors.New("rpcframe: JSON nested too deep")
	ErrBatch          = errors.New("rpcframe: JSON-RPC batches are not accepted")
	ErrNotObject      = errors.New("rpcframe: frame is not a JSON object")
	ErrInvalidRequest = errors.New("rpcframe: not a valid JSON-RPC 2.0 message")
	// ErrBusy: a call arrived while the connection already held its limit
	// of unanswered calls (Limits.MaxInFlight, MaxHeldBytes).
	ErrBusy = errors.New("rpcframe: too much work in flight on this connection")
)

// JSON-RPC 2.0 error codes used in replies.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	// CodeBusy is in the range JSON-RPC leaves to servers; its message
	// starts with BUSY.
	CodeBusy = -32000
)

// Rejection describes a frame that was not handed on.
type Rejection struct {
	// Reason wraps one of the Err* sentinels of this package.
	Reason error
	// Reply is the complete newline-terminated JSON-RPC error response to
	// write back, or nil when the frame was a notification (JSON-RPC forbids
	// answering those).
	Reply []byte
}

// rejectedFrame carries a sentinel plus the public text of the reply. The
// public text is fixed per case: it never echoes the frame, which may hold
// anything the agent chose to send.
type rejectedFrame struct {
	sentinel error
	code     int
	text     string
	id       json.RawMessage // nil: reply with null
	silent   bool            // an invalid notification: drop without reply
}

func (e *rejectedFrame) Error() string { return e.sentinel.Error() + ": " + e.text }
func (e *rejectedFrame) Unwrap() error { return e.sentinel }

func (e *rejectedFrame) rejection() *Rejection {
	r := &Rejection{Reason: e}
	if !e.silent {
		r.Reply = ErrorReply(e.id, e.code, e.text)
	}
	return r
}

// ErrorReply encodes a newline-terminated JSON-RPC error response. id must be
// a JSON string or number already validated by this package, or nil for null.
func ErrorReply(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	return append(out, '\n')
}
