// Package agentapi is the vocabulary an agent reads and sends: the names
// of Yett's tools, the codes that start every answer, and the reasons that
// follow REAUTH_REQUIRED and RESPONSE_REFUSED. It is a leaf: the gateway
// speaks it, and the inventory's drill client, the MCP shim and the CLI
// read it, without importing the gateway.
//
// Their spelling is a contract with agents and with the scripts people
// write around them: changing one is a breaking change.
package agentapi

// Tool names. Named operations add tools of their own names.
const (
	ToolHTTPRequest = "http.request"
	// ToolHTTPGet is http.request for reads only (GET or HEAD), which
	// agents' clients are told changes nothing.
	ToolHTTPGet = "http.get"
	ToolStatus  = "yett.status"
	// ToolSSHExec runs one command on an SSH host a person added to Yett.
	ToolSSHExec = "ssh.exec"
	// ToolRequestAccess asks the person for a credential, SSH host or
	// operation Yett does not hold for the agent; it gives nothing itself.
	ToolRequestAccess = "yett.request_access"
)

// Codes of yett.request_access's answer (a refusal is REFUSED with
// DetailPersonRefused or DetailAlreadyRefused).
const (
	CodeGranted          = "GRANTED"
	CodeAlreadyAvailable = "ALREADY_AVAILABLE"
	DetailPersonRefused  = "person_refused"
	DetailAlreadyRefused = "already_refused"
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

// CodeApprovalRequired answers yett.status for a run that may not see call
// fates: it has no valid session.
const CodeApprovalRequired = "APPROVAL_REQUIRED"

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

// DetailKeyReused follows INVALID_REQUEST when an idempotency key names an
// earlier call with another request: never a fate code, which would tell
// the agent about a call it did not make.
const DetailKeyReused = "idempotency_key_reused"

// Reauth reasons (seed 000).
const (
	ReauthProcessChanged    = "process_changed"
	ReauthGatewayRestarted  = "gateway_restarted"
	ReauthVaultStateChanged = "vault_state_changed"
)

// Answer codes of named operations.
const (
	CodeNeedsReconnection = "AUTHORIZATION_NEEDS_RECONNECTION"
	CodeAuthRevoked       = "AUTHORIZATION_REVOKED"
	CodeAuthSuspended     = "AUTHORIZATION_SUSPENDED"
	CodeUnknownOperation  = "UNKNOWN_OPERATION"
)

// Answer codes of SSH commands.
const (
	CodeNoHost            = "NO_SUCH_HOST"
	CodeHostKeyNotPinned  = "HOST_KEY_NOT_PINNED"
	CodeHostKeyChanged    = "HOST_KEY_CHANGED"
	CodeCommandNotAllowed = "COMMAND_NOT_ALLOWED"
)

// CodeDrillStopped answers Yett's own drill client where an agent's call
// would go on to its session approval: every check before it passed.
const CodeDrillStopped = "DRILL_STOPPED_BEFORE_APPROVAL"
