package gateway

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An outcome is the part every tool result carries as structuredContent
// (and every tool's output schema declares): the code an agent branches on
// (COMPLETED, STATUS_UNKNOWN, RETRY_SAFE, REAUTH_REQUIRED, LOCKED, DENIED,
// …), its detail (vault_state_changed, status=200, …), the words the text
// says, and which call and which audit entry it is about. Each channel's
// answer embeds it beside its own facts; the text content is the same JSON
// (or, for a refusal, "CODE: words" as it always was).
type outcome struct {
	Outcome        string `json:"outcome"`
	Detail         string `json:"detail,omitempty"`
	Message        string `json:"message,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// AuditEntry is the index of the audit log entry that records this
	// call's result or refusal (yett audit show reads it).
	AuditEntry *int64 `json:"audit_entry,omitempty"`
}

// outcomeOf splits a code line ("REAUTH_REQUIRED vault_state_changed",
// "COMPLETED status=200") into the outcome and its detail.
func outcomeOf(code string) outcome {
	o, detail, _ := strings.Cut(code, " ")
	return outcome{Outcome: o, Detail: detail}
}

// at is o about call id (idempotency key key) and audit entry entry (<0:
// none).
func (o outcome) at(id, key string, entry int64) outcome {
	o.RequestID, o.IdempotencyKey = id, key
	if entry >= 0 {
		o.AuditEntry = &entry
	}
	return o
}

// toolError is an isError result whose text is chosen here, never an
// internal error's text.
func toolError(code, format string, args ...any) *mcp.CallToolResult {
	return outcomeOf(code).refused(fmt.Sprintf(format, args...))
}

// refused is the isError result "CODE: message" of o.
func (o outcome) refused(message string) *mcp.CallToolResult {
	o.Message = message
	return o.refusedAs(o)
}

// refusedAs is the isError result "CODE detail: message" of o whose
// structured content is v (o, or an answer that embeds it).
func (o outcome) refusedAs(v any) *mcp.CallToolResult {
	text := o.Outcome
	if o.Detail != "" {
		text += " " + o.Detail
	}
	if o.Message != "" {
		text += ": " + o.Message
	}
	raw, _ := json.Marshal(v)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(raw)}
}

// toolAnswer is a result whose structured content is v (which embeds an
// outcome) and whose text is the same JSON after prefix (a line, or "").
func toolAnswer(prefix string, v any, isError bool) *mcp.CallToolResult {
	raw, _ := json.Marshal(v)
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: prefix + string(raw)}},
		StructuredContent: json.RawMessage(raw)}
}

// toolText is a result with words for text, and an outcome.
func toolText(o outcome, text string) *mcp.CallToolResult {
	o.Message = text
	raw, _ := json.Marshal(o)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(raw)}
}

const lockedText = "the Yett vault is locked. This call was refused and is not kept: it will not run after unlock. Unlock Yett, then send a new call"

// outputSchema is a tool's output schema: the outcome's fields and the
// tool's own (JSON Schema property definitions).
func outputSchema(own string) json.RawMessage {
	common := `"outcome": {"type": "string", "description": "what happened: COMPLETED, STATUS_UNKNOWN, RETRY_SAFE, IN_PROGRESS, NOT_FOUND, APPROVAL_REQUIRED, REAUTH_REQUIRED, LOCKED, DENIED, APPROVAL_TIMEOUT, WITHDRAWN, INVALID_REQUEST, NO_CREDENTIAL, UNAVAILABLE, …"},
		"detail": {"type": "string", "description": "the outcome's detail: vault_state_changed, process_changed, status=200, …"},
		"message": {"type": "string"},
		"request_id": {"type": "string", "description": "Yett's id of the call"},
		"idempotency_key": {"type": "string"},
		"audit_entry": {"type": "integer", "description": "the audit log entry that records the result or the refusal"}`
	if own != "" {
		common += ",\n\t\t" + own
	}
	return json.RawMessage(`{"type": "object", "required": ["outcome"], "properties": {` + common + `}}`)
}
