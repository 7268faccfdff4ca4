package gateway

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Codes that start every answer the agent reads.
const (
	CodeLocked           = "LOCKED"
	CodeInvalid          = "INVALID_REQUEST"
	CodeNoCredential     = "NO_CREDENTIAL"
	CodeAmbiguous        = "AMBIGUOUS_CREDENTIAL"
	CodeReauth           = "REAUTH_REQUIRED"
	CodeDenied           = "DENIED"
	CodeApprovalTimeout  = "APPROVAL_TIMEOUT"
	CodeWithdrawn        = "WITHDRAWN"
	CodeAuditUnavailable = "AUDIT_UNAVAILABLE"
	CodeUnavailable      = "UNAVAILABLE"
	CodeStatusUnknown    = "STATUS_UNKNOWN inspect_activity_journal"
	CodeRetrySafe        = "RETRY_SAFE previous_action_not_started"
	CodeInProgress       = "IN_PROGRESS"
	CodeCompleted        = "COMPLETED"
	CodeNotFound         = "NOT_FOUND"
	CodeRefused          = "REFUSED"
	CodeFailed           = "FAILED"
	// CodeResponseRefused: the request was sent and the server answered,
	// but Yett withheld the answer because it could carry the credential in
	// a form Yett cannot redact. One of the Refused* details follows.
	CodeResponseRefused = "RESPONSE_REFUSED"
)

// Details of RESPONSE_REFUSED; each is also the reason of the call's audit
// result.
const (
	// RefusedEncoded: a Content-Encoding Yett did not ask for (or one it
	// could not decode).
	RefusedEncoded = "encoded_response"
	// RefusedPartial: a 206 Partial Content answer to a credentialed
	// request.
	RefusedPartial = "partial_content"
)

// Reauth reasons (seed 000).
const (
	ReauthProcessChanged    = "process_changed"
	ReauthGatewayRestarted  = "gateway_restarted"
	ReauthVaultStateChanged = "vault_state_changed"
)

// toolError is an isError result whose text is chosen here, never an
// internal error's text.
func toolError(code, format string, args ...any) *mcp.CallToolResult {
	text := code
	if format != "" {
		text += ": " + fmt.Sprintf(format, args...)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func toolText(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

const lockedText = "the Yett vault is locked. This call was refused and is not kept: it will not run after unlock. Unlock Yett, then send a new call"
