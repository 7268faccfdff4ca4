package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/toolargs"
)

// Argument bounds. The frame cap (8 MiB) bounds the body already.
const (
	maxURLLen     = 8192
	maxMapEntries = 64
	maxNameLen    = 256
	maxValueLen   = 8192
)

// hint is a pointer to b, for the annotations' optional hints.
func hint(b bool) *bool { return &b }

// The annotations tell an agent's client what a tool can do (Claude
// Code's plan mode and Codex's approval modes decide from them). They are
// hints to the client and change nothing in Yett: every call still goes
// through the vault gate, the live-process check and the person's
// approvals.
var (
	readAnnotations = func(title string, openWorld bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: hint(openWorld)}
	}
	writeAnnotations = func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, DestructiveHint: hint(true), OpenWorldHint: hint(true)}
	}
)

// operationAnnotations are a named operation's: read-only when the person
// marked it so, otherwise a write that may destroy.
func operationAnnotations(o operation.Operation, title string) *mcp.ToolAnnotations {
	if o.ReadOnly {
		return readAnnotations(title, true)
	}
	return writeAnnotations(title)
}

// The tools' own output fields, beside the outcome's (outputSchema).
var (
	httpOutputSchema = outputSchema(`"status": {"type": "integer", "description": "the HTTP status the server answered"},
		"status_text": {"type": "string"},
		"headers": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
		"body": {"type": "string", "description": "the answer's body, when it is UTF-8 (the credential redacted)"},
		"body_base64": {"type": "string", "description": "the answer's body otherwise"},
		"truncated": {"type": "boolean", "description": "the body reached Yett's cap and was cut"}`)
	sshOutputSchema = outputSchema(`"host": {"type": "string"},
		"exit_code": {"type": "integer"},
		"signal": {"type": "string"},
		"ended_by": {"type": "string", "description": "Yett ended the command: timeout, output_cap or vault_lock"},
		"stdout": {"type": "string"}, "stderr": {"type": "string"},
		"stdout_base64": {"type": "string"}, "stderr_base64": {"type": "string"},
		"truncated": {"type": "boolean"},
		"host_key_fingerprint": {"type": "string"},
		"duration_ms": {"type": "integer"}`)
	statusOutputSchema = outputSchema(`"fate": {"type": "string", "description": "what happened to the call, as yett.status's first line"},
		"authority": {"type": "string"},
		"method": {"type": "string"}, "target": {"type": "string"},
		"status": {"type": "integer"}, "exit_code": {"type": "integer"}, "signal": {"type": "string"},
		"response_bytes": {"type": "integer"}, "response_sha256": {"type": "string"}`)
)

const httpArgs = `"url": {"type": "string", "description": "absolute http or https URL", "maxLength": 8192},
		"params": {"type": "object", "description": "added to the URL query", "additionalProperties": {"type": "string"}},
		"headers": {"type": "object", "description": "request headers; Authorization, Cookie, Host and hop-by-hop headers are set by Yett only", "additionalProperties": {"type": "string"}},
		"idempotency_key": {"type": "string", "description": "names the logical action (letters, digits, . _ : -; at most 128)", "maxLength": 128}`

func httpRequestTool() *mcp.Tool {
	return &mcp.Tool{
		Name: agentapi.ToolHTTPRequest,
		Description: "Perform an HTTP request through Yett. Yett chooses and injects the credential bound to the URL's host and path; " +
			"you never see or send it. The first request of this agent run needs the person's approval. " +
			"Give every logical action an idempotency_key and reuse it only when retrying that same action; " +
			"ask yett.status with it after a disconnect before you retry. For a GET or HEAD, http.get says to your client that it only reads.",
		InputSchema: json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"required": ["method", "url"],
	"properties": {
		"method": {"type": "string", "enum": ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]},
		"body": {"description": "a string is sent as is; any other JSON value is sent as JSON"},
		` + httpArgs + `
	}
}`),
		OutputSchema: httpOutputSchema,
		Title:        "HTTP request with a credential Yett holds",
		Annotations:  writeAnnotations("HTTP request with a credential Yett holds"),
	}
}

func httpGetTool() *mcp.Tool {
	return &mcp.Tool{
		Name: agentapi.ToolHTTPGet,
		Description: "Read a URL through Yett with GET (or HEAD): http.request limited to reads. Yett chooses and injects the credential " +
			"bound to the URL's host and path; you never see or send it. The same approvals apply: the first request of this agent run " +
			"needs the person's approval, and a credential the person set to approve every call asks every time.",
		InputSchema: json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"required": ["url"],
	"properties": {
		"method": {"type": "string", "enum": ["GET", "HEAD"], "description": "GET when absent"},
		` + httpArgs + `
	}
}`),
		OutputSchema: httpOutputSchema,
		Title:        "HTTP GET with a credential Yett holds",
		Annotations:  readAnnotations("HTTP GET with a credential Yett holds", true),
	}
}

func statusTool() *mcp.Tool {
	return &mcp.Tool{
		Name: agentapi.ToolStatus,
		Description: "What happened to a call you sent before, by its idempotency_key: COMPLETED with its outcome, " +
			"RETRY_SAFE previous_action_not_started, STATUS_UNKNOWN inspect_activity_journal, or REAUTH_REQUIRED <reason> " +
			"when this agent run must be approved again before it may act. It never acts and never asks the person.",
		InputSchema: json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"required": ["idempotency_key"],
	"properties": {
		"idempotency_key": {"type": "string", "maxLength": 128}
	}
}`),
		OutputSchema: statusOutputSchema,
		Title:        "What happened to an earlier call",
		Annotations:  readAnnotations("What happened to an earlier call", false),
	}
}

// errArgs carries a message safe to show the agent: it names the field and
// the rule, never echoes the value.
type errArgs struct{ msg string }

func (e *errArgs) Error() string { return e.msg }

func argErr(format string, a ...any) error { return &errArgs{msg: fmt.Sprintf(format, a...)} }

// httpCall is a validated http.request.
type httpCall struct {
	req    action.Request
	target target.URL // what the vault's bindings are matched against
	host   string     // target.Authority(), for the card, the journal and the audit log
	path   string
	key    string // "" when the agent gave none
}

var allowedMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

// reservedHeaders are set by Yett or the transport only. The executor
// refuses them too; checking here keeps such a call from reaching the
// journal at all. Accept-Encoding, Range and If-Range belong to Yett
// because an encoded or partial answer would carry the credential past the
// redactor.
var reservedHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "host": true, "cookie": true,
	"content-length": true, "idempotency-key": true, "connection": true, "keep-alive": true,
	"te": true, "trailer": true, "transfer-encoding": true, "upgrade": true,
	"proxy-connection": true, "proxy-authenticate": true,
	"accept-encoding": true, "range": true, "if-range": true,
}

// toolArgs reads a tool's arguments: one JSON object, each key once and in
// one spelling (toolargs), every key one of fields exactly.
func toolArgs(raw json.RawMessage, fields ...string) (map[string]json.RawMessage, error) {
	obj, err := toolargs.Object(raw)
	if errors.Is(err, toolargs.ErrDuplicate) {
		return nil, argErr("arguments: %v", err)
	}
	if err != nil {
		return nil, argErr("arguments must be a single JSON object with only the documented fields and types")
	}
	for k := range obj {
		if !slices.Contains(fields, k) {
			return nil, argErr("arguments must be a JSON object with only the documented fields (%s)", strings.Join(fields, ", "))
		}
	}
	return obj, nil
}

// stringArg decodes a string field; absent or null is "".
func stringArg(obj map[string]json.RawMessage, name string) (string, error) {
	v, ok := obj[name]
	if !ok || string(v) == "null" {
		return "", nil
	}
	var s string
	if v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", argErr("%s must be a string", name)
	}
	return s, nil
}

// parseHTTPArgs validates http.request arguments.
func parseHTTPArgs(raw json.RawMessage) (*httpCall, error) {
	obj, err := toolArgs(raw, "method", "url", "params", "headers", "body", "idempotency_key")
	if err != nil {
		return nil, err
	}
	return httpArgsOf(obj)
}

// parseHTTPGetArgs validates http.get arguments: no body, GET or HEAD.
func parseHTTPGetArgs(raw json.RawMessage) (*httpCall, error) {
	obj, err := toolArgs(raw, "method", "url", "params", "headers", "idempotency_key")
	if err != nil {
		return nil, err
	}
	method, err := stringArg(obj, "method")
	if err != nil {
		return nil, err
	}
	switch m := strings.ToUpper(method); {
	case m == "":
		obj["method"] = json.RawMessage(`"GET"`)
	case !readMethod(m):
		return nil, argErr("http.get reads only: method must be GET or HEAD (http.request sends the others)")
	}
	return httpArgsOf(obj)
}

// readMethod says whether an HTTP method (as sent: upper case) only reads:
// GET and HEAD, what http.get takes and what a "writes" approval lets go on
// the session.
func readMethod(m string) bool { return m == "GET" || m == "HEAD" }

// httpArgsOf validates the fields of an HTTP call.
func httpArgsOf(obj map[string]json.RawMessage) (*httpCall, error) {
	method, err := stringArg(obj, "method")
	if err != nil {
		return nil, err
	}
	rawURL, err := stringArg(obj, "url")
	if err != nil {
		return nil, err
	}
	key, err := stringArg(obj, "idempotency_key")
	if err != nil {
		return nil, err
	}
	method = strings.ToUpper(method)
	if !allowedMethods[method] {
		return nil, argErr("method must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
	}
	if rawURL == "" || len(rawURL) > maxURLLen || !utf8.ValidString(rawURL) {
		return nil, argErr("url must be a non-empty URL of at most %d bytes", maxURLLen)
	}
	t, err := target.Parse(rawURL)
	if err != nil {
		// The target package's text names the rule, never the URL.
		return nil, argErr("url: %s", strings.TrimPrefix(err.Error(), target.ErrInvalid.Error()+": "))
	}
	params, err := toolargs.Strings(obj["params"])
	if err != nil {
		return nil, argErr("params must be an object of strings, each name once and in one letter case")
	}
	headers, err := toolargs.Strings(obj["headers"])
	if err != nil {
		return nil, argErr("headers must be an object of strings, each name once and in one letter case")
	}
	if err := checkMap("params", params, false); err != nil {
		return nil, err
	}
	if err := checkMap("headers", headers, true); err != nil {
		return nil, err
	}
	if key, err = checkKey(key, true); err != nil {
		return nil, err
	}
	body, contentType, err := bodyBytes(obj["body"])
	if err != nil {
		return nil, err
	}
	if contentType != "" && !hasHeader(headers, "Content-Type") {
		headers = cloneMap(headers)
		headers["Content-Type"] = contentType
	}
	return &httpCall{
		req:    action.Request{Method: method, URL: t.String(), Params: params, Headers: headers, Body: body},
		target: t, host: t.Authority(), path: t.Path, key: key,
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

func parseStatusArgs(raw json.RawMessage) (string, error) {
	obj, err := toolArgs(raw, "idempotency_key")
	if err != nil {
		return "", err
	}
	key, err := stringArg(obj, "idempotency_key")
	if err != nil {
		return "", err
	}
	return checkKey(key, false)
}
