package rpcframe

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/yettdev/yett/backend/toolargs"
)

// Parse checks one frame (without its newline) and returns either the clean
// message or a Rejection. It never returns both, and never neither.
func Parse(frame []byte, lim Limits) (jsonrpc.Message, *Rejection) {
	msg, err := parse(frame, lim.withDefaults())
	if err != nil {
		return nil, err.rejection()
	}
	return msg, nil
}

func parse(frame []byte, lim Limits) (jsonrpc.Message, *rejectedFrame) {
	if len(frame) > lim.MaxFrameBytes {
		// The frame is whole here, but parsing a frame over the limit is
		// what the limit forbids; the same scan as for a streamed one
		// recovers its id.
		var s idScanner
		s.feed(frame)
		return nil, tooLarge(s.id())
	}
	if !utf8.Valid(frame) {
		return nil, &rejectedFrame{sentinel: ErrMalformed, code: CodeParseError, text: "parse error: invalid UTF-8"}
	}
	// Depth first: it is a linear scan with a counter, so hostile nesting is
	// refused before any decoder recurses into it.
	if depthExceeds(frame, lim.MaxDepth) {
		return nil, &rejectedFrame{sentinel: ErrTooDeep, code: CodeInvalidRequest,
			text: "invalid request: JSON nested deeper than " + strconv.Itoa(lim.MaxDepth) + " levels"}
	}
	if !json.Valid(frame) {
		return nil, &rejectedFrame{sentinel: ErrMalformed, code: CodeParseError, text: "parse error: malformed JSON"}
	}
	switch firstByte(frame) {
	case '{':
	case '[':
		return nil, &rejectedFrame{sentinel: ErrBatch, code: CodeInvalidRequest, text: "invalid request: JSON-RPC batches are not supported; send one message per line"}
	default:
		return nil, &rejectedFrame{sentinel: ErrNotObject, code: CodeInvalidRequest, text: "invalid request: a message must be a JSON object"}
	}
	// The message keeps its members (params above all) past this frame,
	// and the frame is the Reader's buffer, which the next frame
	// overwrites: the members are read out of a copy of their own.
	fields, err := topLevelFields(bytes.Clone(frame))
	if err != nil {
		return nil, invalid(nil, false, err.Error())
	}
	if duplicateKey(frame) {
		// The top level is sound (topLevelFields refused a key twice
		// there), so its id names the call: answer it.
		var replyID json.RawMessage
		if _, err := parseID(fields.id); fields.hasID && err == nil {
			replyID = fields.id
		}
		return nil, invalid(replyID, !fields.hasID && fields.hasMethod, "a key is given twice (or in two letter cases) in one object")
	}
	return fields.message()
}

// tooLarge rejects a frame over the size limit; id is its recovered id, nil
// when none could be trusted.
func tooLarge(id []byte) *rejectedFrame {
	return &rejectedFrame{sentinel: ErrFrameTooLarge, code: CodeInvalidRequest, id: id,
		text: "invalid request: message exceeds the size limit"}
}

func invalid(id json.RawMessage, silent bool, text string) *rejectedFrame {
	return &rejectedFrame{sentinel: ErrInvalidRequest, code: CodeInvalidRequest, id: id, silent: silent, text: "invalid request: " + text}
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// depthExceeds reports whether arrays/objects nest deeper than max. It
// tracks strings so brackets inside them do not count. Malformed input is
// left for json.Valid to judge.
func depthExceeds(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// fields holds the raw values of the top-level keys of a message.
type fields struct {
	version, id, method, params, result, errObj json.RawMessage
	hasID, hasMethod, hasResult, hasError       bool
}

// topLevelFields reads the keys of a valid JSON object exactly as spelled.
// Go's struct decoding matches keys case-insensitively and keeps the last
// duplicate; either would let a frame mean one thing here and another to a
// later decoder, so keys are matched exactly and duplicates are refused.
func topLevelFields(frame []byte) (*fields, error) {
	f := &fields{}
	var seen [6]bool
	err := toolargs.ValidMembers(frame, func(key string, raw json.RawMessage) error {
		var n int
		switch key {
		case "jsonrpc":
			n, f.version = 0, raw
		case "id":
			n, f.id, f.hasID = 1, raw, true
		case "method":
			n, f.method, f.hasMethod = 2, raw, true
		case "params":
			n, f.params = 3, raw
		case "result":
			n, f.result, f.hasResult = 4, raw, true
		case "error":
			n, f.errObj, f.hasError = 5, raw, true
		default:
			return errUnknownMember
		}
		if seen[n] {
			return errDuplicateMember
		}
		seen[n] = true
		return nil
	})
	switch {
	case errors.Is(err, toolargs.ErrNotObject):
		return nil, errors.New("malformed object")
	case err != nil:
		return nil, err
	}
	return f, nil
}

var (
	errUnknownMember   = errors.New("unknown member in message")
	errDuplicateMember = errors.New("duplicate key in message")
)

// message validates the fields and builds the SDK message from them.
func (f *fields) message() (jsonrpc.Message, *rejectedFrame) {
	// A peer's error response with a null id reports that it could not
	// parse something we sent. There is no request to answer and replying
	// could start an error ping-pong, so it is dropped.
	if !f.hasMethod && f.hasError && string(f.id) == "null" {
		return nil, invalid(nil, true, "error response without an id")
	}
	id, idErr := parseID(f.id)
	var replyID json.RawMessage
	if f.hasID && idErr == nil {
		replyID = f.id
	}
	// An invalid notification is dropped silently; anything with an id, or
	// whose id is unusable, gets an answer.
	silent := !f.hasID && f.hasMethod
	if string(f.version) != `"2.0"` {
		return nil, invalid(replyID, silent, `"jsonrpc" must be "2.0"`)
	}
	if f.hasID && idErr != nil {
		return nil, invalid(nil, false, idErr.Error())
	}
	if f.hasMethod {
		var method string
		if json.Unmarshal(f.method, &method) != nil || method == "" {
			return nil, invalid(replyID, silent, `"method" must be a non-empty string`)
		}
		if f.hasResult || f.hasError {
			return nil, invalid(replyID, silent, "a request cannot carry result or error")
		}
		// null is how some clients spell "no params"; the SDK takes it.
		if f.params != nil && firstByte(f.params) != '{' && firstByte(f.params) != '[' && string(f.params) != "null" {
			return nil, invalid(replyID, silent, `"params" must be an object or an array`)
		}
		req := &jsonrpc.Request{Method: method, Params: f.params}
		if f.hasID {
			req.ID = id
		}
		return req, nil
	}
	if !f.hasID {
		return nil, invalid(nil, false, `a message needs "method" or "id"`)
	}
	if f.hasResult == f.hasError {
		return nil, invalid(replyID, false, "a response carries exactly one of result or error")
	}
	resp := &jsonrpc.Response{ID: id, Result: f.result}
	if f.hasError {
		var we jsonrpc.Error
		if !validErrorObject(f.errObj, &we) {
			return nil, invalid(replyID, false, `"error" must be an object with an integer code and a string message`)
		}
		resp.Error = &we
	}
	return resp, nil
}

// maxExactID bounds numeric ids to what float64 holds exactly, because the
// SDK builds ids from float64.
const maxExactID = 1 << 53

func parseID(raw json.RawMessage) (jsonrpc.ID, error) {
	if raw == nil {
		return jsonrpc.ID{}, nil
	}
	switch firstByte(raw) {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonrpc.ID{}, errors.New(`"id" is not a valid string`)
		}
		return jsonrpc.MakeID(s)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil || n > maxExactID || n < -maxExactID {
			return jsonrpc.ID{}, errors.New(`"id" must be a string or an integer`)
		}
		return jsonrpc.MakeID(float64(n))
	}
	return jsonrpc.ID{}, errors.New(`"id" must be a string or an integer`)
}

func validErrorObject(raw json.RawMessage, we *jsonrpc.Error) bool {
	if firstByte(raw) != '{' {
		return false
	}
	// Keys are matched exactly, as at the top level: encoding/json matches
	// struct fields case-insensitively, so "Code" would mean one thing here
	// and another to the SDK's own decoder.
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return false
	}
	for k := range members {
		if k != "code" && k != "message" && k != "data" {
			return false
		}
	}
	var message string
	if firstByte(members["message"]) != '"' || json.Unmarshal(members["message"], &message) != nil {
		return false
	}
	code, err := strconv.ParseInt(string(bytes.TrimSpace(members["code"])), 10, 64)
	if err != nil || code < math.MinInt32 || code > math.MaxInt32 {
		return false
	}
	we.Code, we.Message, we.Data = code, message, members["data"]
	return true
}
