package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/journal"
)

// Tool names.
const (
	ToolHTTPRequest = "http.request"
	ToolStatus      = "yett.status"
)

// Argument bounds. The frame cap (8 MiB) bounds the body already.
const (
	maxURLLen     = 8192
	maxMapEntries = 64
	maxNameLen    = 256
	maxValueLen   = 8192
)

func httpRequestTool() *mcp.Tool {
	return &mcp.Tool{
		Name: ToolHTTPRequest,
		Description: "Perform an HTTP request through Yett. Yett chooses and injects the credential bound to the URL's host and path; " +
			"you never see or send it. The first request of this agent run needs the person's approval. " +
			"Give every logical action an idempotency_key and reuse it only when retrying that same action; " +
			"ask yett.status with it after a disconnect before you retry.",
		InputSchema: json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"required": ["method", "url"],
	"properties": {
		"method": {"type": "string", "enum": ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]},
		"url": {"type": "string", "description": "absolute http or https URL", "maxLength": 8192},
		"params": {"type": "object", "description": "added to the URL query", "additionalProperties": {"type": "string"}},
		"headers": {"type": "object", "description": "request headers; Authorization, Cookie, Host and hop-by-hop headers are set by Yett only", "additionalProperties": {"type": "string"}},
		"body": {"description": "a string is sent as is; any other JSON value is sent as JSON"},
		"idempotency_key": {"type": "string", "description": "names the logical action (letters, digits, . _ : -; at most 128)", "maxLength": 128}
	}
}`),
	}
}

func statusTool() *mcp.Tool {
	return &mcp.Tool{
		Name: ToolStatus,
		Description: "What happened to a call you sent before, by its idempotency_key: COMPLETED with its outcome, " +
			"RETRY_SAFE previous_action_not_started, STATUS_UNKNOWN inspect_activity_journal, or REAUTH_REQUIRED <reason> " +
			"when this agent run must be approved again before it may act.",
		InputSchema: json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"required": ["idempotency_key"],
	"properties": {
		"idempotency_key": {"type": "string", "maxLength": 128}
	}
}`),
	}
}

// errArgs carries a message safe to show the agent: it names the field and
// the rule, never echoes the value.
type errArgs struct{ msg string }

func (e *errArgs) Error() string { return e.msg }

func argErr(format string, a ...any) error { return &errArgs{msg: fmt.Sprintf(format, a...)} }

type httpArgs struct {
	Method         string            `json:"method"`
	URL            string            `json:"url"`
	Params         map[string]string `json:"params"`
	Headers        map[string]string `json:"headers"`
	Body           json.RawMessage   `json:"body"`
	IdempotencyKey string            `json:"idempotency_key"`
}

// httpCall is a validated http.request.
type httpCall struct {
	req  action.Request
	host string // host[:port] as in the URL, for the binding
	path string
	key  string // "" when the agent gave none
}

var allowedMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

// reservedHeaders are set by Yett or the transport only. The executor
// refuses them too; checking here keeps such a call from reaching the
// journal at all.
var reservedHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "host": true, "cookie": true,
	"content-length": true, "idempotency-key": true, "connection": true, "keep-alive": true,
	"te": true, "trailer": true, "transfer-encoding": true, "upgrade": true,
	"proxy-connection": true, "proxy-authenticate": true,
}

func decodeStrict(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argErr("arguments must be a JSON object with only the documented fields and types")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return argErr("arguments must be a single JSON object")
	}
	return nil
}

// parseHTTPArgs validates http.request arguments.
func parseHTTPArgs(raw json.RawMessage) (*httpCall, error) {
	var a httpArgs
	if err := decodeStrict(raw, &a); err != nil {
		return nil, err
	}
	method := strings.ToUpper(a.Method)
	if !allowedMethods[method] {
		return nil, argErr("method must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
	}
	if a.URL == "" || len(a.URL) > maxURLLen || !utf8.ValidString(a.URL) {
		return nil, argErr("url must be a non-empty URL of at most %d bytes", maxURLLen)
	}
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, argErr("url must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, argErr("url must not carry user information; Yett injects credentials")
	}
	if u.Fragment != "" {
		return nil, argErr("url must not have a fragment")
	}
	if err := checkMap("params", a.Params, false); err != nil {
		return nil, err
	}
	if err := checkMap("headers", a.Headers, true); err != nil {
		return nil, err
	}
	key, err := checkKey(a.IdempotencyKey, true)
	if err != nil {
		return nil, err
	}
	body, contentType, err := bodyBytes(a.Body)
	if err != nil {
		return nil, err
	}
	headers := a.Headers
	if contentType != "" && !hasHeader(headers, "Content-Type") {
		headers = cloneMap(headers)
		headers["Content-Type"] = contentType
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return &httpCall{
		req:  action.Request{Method: method, URL: a.URL, Params: a.Params, Headers: headers, Body: body},
		host: u.Host, path: path, key: key,
	}, nil
}

func checkMap(field string, m map[string]string, header bool) error {
	if len(m) > maxMapEntries {
		return argErr("%s may have at most %d entries", field, maxMapEntries)
	}
	for k, v := range m {
		if k == "" || len(k) > maxNameLen || len(v) > maxValueLen || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return argErr("%s: names must be 1-%d bytes and values at most %d bytes of UTF-8", field, maxNameLen, maxValueLen)
		}
		if !header {
			continue
		}
		if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
			return argErr("headers: invalid header name or value")
		}
		if reservedHeaders[strings.ToLower(k)] {
			return argErr("headers: %s is set by Yett only", http.CanonicalHeaderKey(k))
		}
	}
	return nil
}

func validHeaderName(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

func hasHeader(m map[string]string, name string) bool {
	for k := range m {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// checkKey validates an idempotency key; empty is allowed only when
// optional.
func checkKey(k string, optional bool) (string, error) {
	if k == "" {
		if optional {
			return "", nil
		}
		return "", argErr("idempotency_key is required")
	}
	if len(k) > journal.MaxKeyLen {
		return "", argErr("idempotency_key may be at most %d characters", journal.MaxKeyLen)
	}
	if !journal.KeyAlphabet(k) {
		return "", argErr("idempotency_key may contain only letters, digits and . _ : -")
	}
	return k, nil
}

func bodyBytes(raw json.RawMessage) ([]byte, string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, "", nil
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, "", argErr("body must be a string or JSON")
		}
		return []byte(s), "", nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return nil, "", argErr("body must be a string or JSON")
	}
	return buf.Bytes(), "application/json", nil
}

type statusArgs struct {
	IdempotencyKey string `json:"idempotency_key"`
}

func parseStatusArgs(raw json.RawMessage) (string, error) {
	var a statusArgs
	if err := decodeStrict(raw, &a); err != nil {
		return "", err
	}
	return checkKey(a.IdempotencyKey, false)
}
