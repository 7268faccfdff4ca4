package audit

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// EventType names what happened. Authority changes are events of their own
// so a reader never has to infer them from gaps between calls.
type EventType string

// Event types. The OAuth, SSH and drill kinds are reserved for the parts that
// will write them; their fields will be added as typed fields, never as free
// text or credential material.
const (
	EventGatewayStarted   EventType = "gateway_started"
	EventGatewayStopped   EventType = "gateway_stopped"
	EventVaultLocked      EventType = "vault_locked"
	EventVaultUnlocked    EventType = "vault_unlocked"
	EventSessionApproved  EventType = "session_approved"
	EventSessionEnded     EventType = "session_ended"
	EventActionRequested  EventType = "action_requested"
	EventActionDenied     EventType = "action_denied"
	EventActionDispatched EventType = "action_dispatched"
	EventActionResult     EventType = "action_result"
	EventApprovalTimeout  EventType = "approval_timeout"
	// EventAnswerRefused: an answer to an approval card was not taken: a
	// notification answer that did not come from the notification server
	// for that very notification (forged), or one the person's policy
	// reserves to the window. The card stays pending.
	EventAnswerRefused EventType = "answer_refused"
	// EventAuditRecovered is written by the log itself when it reopens after a
	// torn tail: where the torn bytes were and where they were saved.
	EventAuditRecovered EventType = "audit_recovered"

	EventAuthorizationConnected EventType = "authorization_connected"
	EventTokenRefreshed         EventType = "token_refreshed"
	EventAuthorizationDisabled  EventType = "authorization_disabled"
	EventAuthorizationRevoked   EventType = "authorization_revoked"
	EventDrillStep              EventType = "drill_step"
	// A person changed where an authorization is revoked or verified at
	// the provider (oauth.step says what).
	EventAuthorizationEdited EventType = "authorization_edited"
	EventSSHHostKeyChanged   EventType = "ssh_host_key_changed"

	// A person saved or removed a named operation (named_operation says
	// which; authorization_id, the account it uses).
	EventOperationSaved   EventType = "operation_saved"
	EventOperationRemoved EventType = "operation_removed"
	// A person changed what the vault holds or how it opens (vault_change
	// says what: a credential added, edited, rotated or removed, the
	// passphrase, keyring unlock, the auto-lock time, a backup).
	EventVaultChanged EventType = "vault_changed"
	// A person approved a per-call card for calls like it for a while
	// (grant_given), and that grant ended (grant_ended: it expired, was
	// revoked, or its session ended). Each call it let through is an
	// action_requested whose via names it.
	EventGrantGiven EventType = "grant_given"
	EventGrantEnded EventType = "grant_ended"
	// An agent asked for something Yett does not hold for it
	// (access_requested), and the person answered: set up or refused
	// (access_answered, success), or nobody did (its reason).
	EventAccessRequested EventType = "access_requested"
	EventAccessAnswered  EventType = "access_answered"
	// A witness refused to cosign this log's newest checkpoint because of
	// what it shows about the log's history (witness says which witness,
	// the sizes and why): the log lost entries a witness saw, or was
	// rewritten. Recorded once per distinct refusal.
	EventCheckpointRefused EventType = "checkpoint_refused"
)

var knownTypes = map[EventType]bool{
	EventGatewayStarted: true, EventGatewayStopped: true, EventVaultLocked: true,
	EventVaultUnlocked: true, EventSessionApproved: true, EventSessionEnded: true,
	EventActionRequested: true, EventActionDenied: true, EventActionDispatched: true,
	EventActionResult: true, EventApprovalTimeout: true, EventAuditRecovered: true, EventAnswerRefused: true,
	EventAuthorizationConnected: true, EventTokenRefreshed: true,
	EventAuthorizationDisabled: true, EventAuthorizationRevoked: true,
	EventDrillStep: true, EventSSHHostKeyChanged: true, EventAuthorizationEdited: true,
	EventOperationSaved: true, EventOperationRemoved: true, EventVaultChanged: true,
	EventGrantGiven: true, EventGrantEnded: true, EventAccessRequested: true, EventAccessAnswered: true,
	EventCheckpointRefused: true,
}

// Reason says concretely why authority ended or an action was refused.
type Reason string

// Reasons a session ends (session_ended) and an action is denied
// (action_denied). Denied and absent are different facts: a denial is always
// written with one of these.
const (
	ReasonProcessExited     Reason = "process_exited"
	ReasonIdentityMismatch  Reason = "identity_mismatch"
	ReasonGatewayRestarted  Reason = "gateway_restarted"
	ReasonVaultLocked       Reason = "vault_locked"
	ReasonVaultStateChanged Reason = "vault_state_changed"
	ReasonRevoked           Reason = "revoked"
	ReasonExpired           Reason = "expired"
	ReasonUserDenied        Reason = "user_denied"
	ReasonApprovalTimeout   Reason = "approval_timeout"
	ReasonPolicy            Reason = "policy"
	ReasonInvalidRequest    Reason = "invalid_request"
	ReasonAuditUnavailable  Reason = "audit_unavailable"
	// Reasons of answer_refused.
	ReasonForgedAnswer Reason = "forged_answer" // not from the notification server, or not for its notification
	ReasonWindowOnly   Reason = "window_only"   // the policy lets only the window answer this card
	// ReasonServerNotAccepted: an Approve from a notification server the
	// person has not accepted (it took the name after the unlock, or an
	// agent run started it).
	ReasonServerNotAccepted Reason = "server_not_accepted"
)

// ResultClass is the coarse outcome of a dispatched action.
type ResultClass string

const (
	ResultSuccess     ResultClass = "success"      // 2xx / exit 0
	ResultClientError ResultClass = "client_error" // 4xx
	ResultServerError ResultClass = "server_error" // 5xx / non-zero exit
	ResultTransport   ResultClass = "transport_error"
	ResultUnknown     ResultClass = "unknown" // sent, outcome not observed
)

// RunBinding is the process identity a session approval was bound to. Every
// field is a fact the gateway observed from the kernel, not something the
// client said; none of it is secret.
type RunBinding struct {
	RunID          string    `json:"run_id"`
	PID            int       `json:"pid"`
	StartTime      time.Time `json:"start_time"`
	Executable     string    `json:"executable"`
	ExecutableHash string    `json:"executable_sha256"` // hex
	Signer         string    `json:"signer"`            // signing requirement or "unsigned"
	ParentPID      int       `json:"parent_pid,omitempty"`
	LaunchNonce    string    `json:"launch_nonce"` // gateway-made, not a credential
}

// Action describes a requested action by name and target, never by its
// credential, headers or body.
type Action struct {
	RequestID string `json:"request_id"`
	Channel   string `json:"channel"`   // "http", "ssh", an operation catalogue name
	Operation string `json:"operation"` // e.g. "create_issue"
	Target    string `json:"target"`    // host or host:port, no userinfo, no query
	// Path is an HTTP call's URL path, without its query, clipped to
	// MaxPathLen bytes: which resource it named, never what it sent.
	Path           string `json:"path,omitempty"`
	CredentialRef  string `json:"credential_ref,omitempty"` // opaque ID of the binding, never its value
	IdempotencyRef string `json:"idempotency_ref,omitempty"`
	// ArgumentsSHA256 is, for a tool of an upstream MCP server, the hex
	// SHA-256 of the arguments exactly as sent: the entry names the call
	// without holding a value of it.
	ArgumentsSHA256 string `json:"arguments_sha256,omitempty"`
}

// Result is what came back from a dispatched action: a class and sizes, not
// the response body.
type Result struct {
	Class      ResultClass `json:"class"`
	Status     int         `json:"status,omitempty"` // HTTP status or exit code
	Bytes      int64       `json:"bytes"`
	DurationMS int64       `json:"duration_ms"`
}

// Recovery describes a torn tail found when the log was reopened.
type Recovery struct {
	Offset    int64  `json:"offset"`
	Length    int64  `json:"length"`
	SHA256    string `json:"sha256"`     // hex, of the torn bytes
	SavedAs   string `json:"saved_as"`   // file name in the log directory
	LastIndex int64  `json:"last_index"` // last whole record before the tear, -1 if none
}

// Event is one audit entry's plaintext. Fields are typed and bounded; there
// is deliberately no field for a token, header, body, password or key, and a
// test walks this type to keep it that way.
type Event struct {
	Type EventType `json:"type"`
	Time time.Time `json:"time"`

	BootID         string `json:"boot_id,omitempty"`
	PreviousBootID string `json:"previous_boot_id,omitempty"`
	VaultEpoch     uint64 `json:"vault_epoch,omitempty"`

	SessionID  string      `json:"session_id,omitempty"`
	ApprovalID string      `json:"approval_id,omitempty"`
	Run        *RunBinding `json:"run,omitempty"`
	ApprovedBy string      `json:"approved_by,omitempty"` // local user name
	Surface    string      `json:"surface,omitempty"`     // "app", "notification"
	Reason     Reason      `json:"reason,omitempty"`

	Action *Action `json:"action,omitempty"`
	Result *Result `json:"result,omitempty"`

	AuthorizationID string          `json:"authorization_id,omitempty"`
	OAuth           *OAuthFacts     `json:"oauth,omitempty"`
	Success         *bool           `json:"success,omitempty"`
	Recovery        *Recovery       `json:"recovery,omitempty"`
	SSH             *SSHFacts       `json:"ssh,omitempty"`
	NamedOperation  *NamedOperation `json:"named_operation,omitempty"`
	VaultChange     *VaultChange    `json:"vault_change,omitempty"`
	Answer          *Answer         `json:"answer,omitempty"`
	Via             *Via            `json:"via,omitempty"`
	Drill           *DrillFacts     `json:"drill,omitempty"`
	Inventory       *InventoryEdit  `json:"inventory,omitempty"`
	Grant           *GrantFacts     `json:"grant,omitempty"`
	Access          *AccessFacts    `json:"access,omitempty"`
	Witness         *WitnessFacts   `json:"witness,omitempty"`
}

// WitnessFacts describe a witness's refusal to cosign a checkpoint
// (checkpoint_refused): public sizes and names only.
type WitnessFacts struct {
	Witness     string `json:"witness"`      // the witness's key name
	Size        int64  `json:"size"`         // the size of the checkpoint refused
	WitnessSize int64  `json:"witness_size"` // the size the witness had cosigned, -1 if unknown
	// Reason: rollback (the log is smaller than what was witnessed), fork
	// (it does not extend it), or unknown_log, bad_signature.
	Reason string `json:"reason"`
}

// AccessFacts describe an agent's request for access (access_requested,
// access_answered): what it asked for and why, in its own words (clipped).
type AccessFacts struct {
	Kind   string `json:"kind"`   // http, ssh, operation
	Target string `json:"target"` // host, SSH host name or operation name
	Why    string `json:"why"`    // the agent's words
}

// GrantFacts describe a time-boxed grant (grant_given, grant_ended): what
// calls of its run it covers and until when. The session it belongs to is
// the event's session_id; the answer that gave it, its via.
type GrantFacts struct {
	ID      string    `json:"id"`
	Channel string    `json:"channel"`          // "http", "ssh", an operation channel
	Method  string    `json:"method,omitempty"` // the one HTTP method it covers
	Scope   string    `json:"scope"`            // host and path prefix, operation name, or host and exact command
	Name    string    `json:"name,omitempty"`   // the credential's or host's name (never its value)
	Ref     string    `json:"ref"`              // the credential's id, or "operation:<name>"
	Until   time.Time `json:"until"`
	Uses    int       `json:"uses,omitempty"` // on grant_ended: calls it let through
}

// Via says how a person's answer to an approval card reached Yett: on
// session_approved, and on an action_requested whose per-call card was
// approved. The agent is a program of the same user, so which channel
// carried the answer, and what Yett checked about it, is what tells an
// auditor whether the person gave it.
type Via struct {
	Surface string `json:"surface"` // "desktop card", "terminal", "notification"
	// Detail is what Yett checked of the channel: the terminal and that
	// the card's one-time code was typed; the notification server's bus
	// name, pid and executable; "click or key in the window".
	Detail string `json:"detail,omitempty"`
	// Verified names the system verification of the person done for this
	// card ("polkit: password of <user>"), "" when none was asked.
	Verified string `json:"verified,omitempty"`
}

// Answer describes an answer to an approval card that was refused
// (answer_refused): which card it named, what it asked and who sent it.
type Answer struct {
	RequestID      string `json:"request_id,omitempty"` // the card it named, "" when none Yett shows
	Action         string `json:"action"`               // the action it asked for, as sent (clipped)
	Sender         string `json:"sender,omitempty"`     // who sent it (a D-Bus unique name)
	NotificationID uint32 `json:"notification_id,omitempty"`
}

// VaultChange describes a change a person made to the vault: what changed
// and, for a credential, which one by id, name and version. Never a
// secret, passphrase or key.
type VaultChange struct {
	Change       string `json:"change"` // credential_added, credential_edited, rotation_reminder_changed, secret_rotated, credential_removed, credential_restored, passphrase_changed, keyring_on, keyring_off, auto_lock_changed, backup_exported, backup_reminder_changed, backup_restored
	CredentialID string `json:"credential_id,omitempty"`
	Name         string `json:"name,omitempty"`
	Version      uint64 `json:"version,omitempty"`
}

// NamedOperation describes a named operation a person saved or removed:
// what agents may call through it, never a value an agent sent.
type NamedOperation struct {
	Name     string `json:"name"`
	Method   string `json:"method,omitempty"`
	Target   string `json:"target,omitempty"`   // host of the URL template
	Approval string `json:"approval,omitempty"` // session, per_call or writes
}

// OAuthFacts describe an OAuth authorization event (connected, refreshed,
// disabled, revoked) or the authorization behind an operation: which
// provider and account, which step and how it ended. Never a token, code,
// assertion or proof.
type OAuthFacts struct {
	Provider    string `json:"provider"`              // host of the token endpoint
	AccountRef  string `json:"account_ref,omitempty"` // e.g. the subject or e-mail the provider named
	Scopes      string `json:"scopes,omitempty"`      // space separated, as granted at connection
	Environment string `json:"environment,omitempty"` // development, staging, production
	Owner       string `json:"owner,omitempty"`       // who owns the authorization
	Step        string `json:"step,omitempty"`        // connect, refresh, local_disable, provider_revocation, verification
	Flow        string `json:"flow,omitempty"`        // authorization_code, client_credentials, device_code
	ErrorCode   string `json:"error_code,omitempty"`  // RFC 6749 error code or a Yett class such as response_lost
	Operation   string `json:"operation,omitempty"`   // named operation that needed the refresh
}

// maxFieldLen bounds every string field: events name things, they do not
// carry documents.
const maxFieldLen = 1024

// MaxPathLen bounds Action.Path; ClipPath cuts a longer one.
const MaxPathLen = 512

// ClipPath returns p cut to at most MaxPathLen bytes at a rune boundary,
// with "…" marking the cut, and any invalid UTF-8 replaced.
func ClipPath(p string) string {
	p = strings.ToValidUTF8(p, "\uFFFD")
	if len(p) <= MaxPathLen {
		return p
	}
	cut := MaxPathLen - len("…")
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}

// fieldCheck bounds an event's string fields, keeping the first error.
type fieldCheck struct{ err error }

func (c *fieldCheck) f(name, v string) {
	if c.err == nil && (len(v) > maxFieldLen || !utf8.ValidString(v)) {
		c.err = fmt.Errorf("%w: field %s too long or not UTF-8", ErrInvalidEvent, name)
	}
}

// ErrInvalidEvent is returned by Append for an event it refuses to record.
var ErrInvalidEvent = errors.New("audit: invalid event")

// validate checks an event before it is sealed. Error texts name the field,
// never its value, because the value might be something that must not leak.
func (e *Event) validate() error {
	if !knownTypes[e.Type] {
		return fmt.Errorf("%w: unknown type", ErrInvalidEvent)
	}
	if e.Time.IsZero() {
		return fmt.Errorf("%w: time not set", ErrInvalidEvent)
	}
	// Every string field is bounded and UTF-8 (fieldCheck keeps the
	// first that is not).
	var c fieldCheck
	c.f("boot_id", e.BootID)
	c.f("previous_boot_id", e.PreviousBootID)
	c.f("session_id", e.SessionID)
	c.f("approval_id", e.ApprovalID)
	c.f("approved_by", e.ApprovedBy)
	c.f("surface", e.Surface)
	c.f("reason", string(e.Reason))
	c.f("authorization_id", e.AuthorizationID)
	if v := e.Via; v != nil {
		c.f("via.surface", v.Surface)
		c.f("via.detail", v.Detail)
		c.f("via.verified", v.Verified)
	}
	if r := e.Run; r != nil {
		c.f("run.run_id", r.RunID)
		c.f("run.executable", r.Executable)
		c.f("run.executable_sha256", r.ExecutableHash)
		c.f("run.signer", r.Signer)
		c.f("run.launch_nonce", r.LaunchNonce)
	}
	if o := e.OAuth; o != nil {
		c.f("oauth.provider", o.Provider)
		c.f("oauth.account_ref", o.AccountRef)
		c.f("oauth.scopes", o.Scopes)
		c.f("oauth.environment", o.Environment)
		c.f("oauth.owner", o.Owner)
		c.f("oauth.step", o.Step)
		c.f("oauth.flow", o.Flow)
		c.f("oauth.error_code", o.ErrorCode)
		c.f("oauth.operation", o.Operation)
	}
	if a := e.Answer; a != nil {
		c.f("answer.request_id", a.RequestID)
		c.f("answer.action", a.Action)
		c.f("answer.sender", a.Sender)
	}
	if v := e.VaultChange; v != nil {
		c.f("vault_change.change", v.Change)
		c.f("vault_change.credential_id", v.CredentialID)
		c.f("vault_change.name", v.Name)
	}
	if o := e.NamedOperation; o != nil {
		c.f("named_operation.name", o.Name)
		c.f("named_operation.method", o.Method)
		c.f("named_operation.target", o.Target)
		c.f("named_operation.approval", o.Approval)
	}
	if a := e.Action; a != nil {
		c.f("action.request_id", a.RequestID)
		c.f("action.channel", a.Channel)
		c.f("action.operation", a.Operation)
		c.f("action.target", a.Target)
		c.f("action.credential_ref", a.CredentialRef)
		c.f("action.idempotency_ref", a.IdempotencyRef)
		c.f("action.arguments_sha256", a.ArgumentsSHA256)
		c.f("action.path", a.Path)
	}
	if a := e.Access; a != nil {
		c.f("access.kind", a.Kind)
		c.f("access.target", a.Target)
		c.f("access.why", a.Why)
	}
	if g := e.Grant; g != nil {
		c.f("grant.id", g.ID)
		c.f("grant.channel", g.Channel)
		c.f("grant.method", g.Method)
		c.f("grant.scope", g.Scope)
		c.f("grant.name", g.Name)
		c.f("grant.ref", g.Ref)
	}
	if w := e.Witness; w != nil {
		c.f("witness.witness", w.Witness)
		c.f("witness.reason", w.Reason)
	}
	e.SSH.fields(&c)
	e.drillFields(&c)
	if c.err != nil {
		return c.err
	}
	return nil
}
