package approval

import (
	"errors"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/procid"
)

// Errors callers branch on. Their texts are safe to show.
var (
	ErrDenied     = errors.New("approval: the person denied the request")
	ErrTimeout    = errors.New("approval: nobody answered in time")
	ErrWithdrawn  = errors.New("approval: the request was withdrawn (the agent exited, or the vault was locked or unlocked)")
	ErrNotPending = errors.New("approval: no such pending request")
	// ErrNotVerified: an approval that needs the person's system
	// verification did not get it (refused, cancelled, or the OS cannot
	// verify here); the card stays pending. It wraps the verifier's error.
	ErrNotVerified = errors.New("approval: the person's system verification did not succeed")
	// ErrVerifying: an approval of this card already waits for the
	// person's verification.
	ErrVerifying        = errors.New("approval: this card's approval already waits for the person's verification")
	ErrNoSession        = errors.New("approval: no such session")
	ErrAuditUnavailable = errors.New("approval: the audit log could not record the decision")
	ErrClosed           = errors.New("approval: broker closed")
	// ErrWindowOnly: the answer came from a surface the person's policy
	// does not let answer this card (a sensitive call from a notification).
	// The card stays pending.
	ErrWindowOnly = errors.New("approval: this request can be answered only in the Yett window")
)

// Surfaces a person answers from, as Answer, the sessions and the audit log
// name them.
const (
	SurfaceApp          = "desktop card" // the card in the app's window
	SurfaceTerminal     = "terminal"     // yett serve's controlling terminal
	SurfaceNotification = "notification" // a native desktop notification
)

// Via is how an answer reached the broker: the surface, and what its
// surface checked (audit.Via says what each field holds). Answer(id,
// approve, surface) is AnswerVia with only the surface.
type Via struct {
	Surface  string
	Detail   string
	Verified string
}

// Audit is v as the audit log records it.
func (v Via) Audit() *audit.Via {
	return &audit.Via{Surface: v.Surface, Detail: v.Detail, Verified: v.Verified}
}

// OperationRef is the Ref of a call card about the named operation.
func OperationRef(name string) string { return "operation:" + name }

// DefaultTimeout is how long a request waits for a person.
const DefaultTimeout = 120 * time.Second

// Kind says what a request asks for.
type Kind string

const (
	KindSession Kind = "session" // may this run use this channel for its lifetime
	KindCall    Kind = "call"    // may this one call go ahead
	// KindAccess: an agent asks for something Yett does not hold for it
	// (yett.request_access). Answering gives nothing by itself: the
	// person adds or chooses a credential, or refuses, and the agent is
	// told which; its calls then ask as any call does.
	KindAccess Kind = "access"
)

// Change says why a session card is shown: what broke continuity.
type Change string

const (
	ChangeFirst            Change = "first request"
	ChangeAgentRestarted   Change = "agent restarted"
	ChangeGatewayRestarted Change = "gateway restarted"
	ChangeVaultLocked      Change = "vault was locked"
	ChangeIdentityChanged  Change = "identity changed"
	ChangeReconnected      Change = "agent reconnected"
	ChangeRevoked          Change = "session was revoked"
	// ChangeAnotherRun: another process of the same program holds a live
	// session; this one is a separate run and needs its own approval.
	ChangeAnotherRun Change = "another run of this program"
)

// Requester is who asks, for the card: facts from the kernel, sanitized by
// procid. None of it comes from the client.
type Requester struct {
	Name       string            `json:"name"`
	Executable string            `json:"executable"`
	ExeSHA256  string            `json:"executable_sha256"`
	Signer     string            `json:"signer"` // or "unsigned"
	PID        int               `json:"pid"`
	StartedAt  time.Time         `json:"started_at"`
	Parents    []procid.Ancestor `json:"parents"`
	CmdLine    string            `json:"cmdline"`
	// Via is the executable that connected on the agent's behalf (the
	// `yett mcp` shim), for display.
	Via string `json:"via"`
	// ShimPID and ShimStartedAt are the connected shim's. ShimParent* is
	// the process that started it, shown apart from the origin: a program
	// can exec the genuine shim so that its parent is the agent while
	// another process holds its stdio.
	ShimPID             int       `json:"shim_pid"`
	ShimStartedAt       time.Time `json:"shim_started_at"`
	ShimParentPID       int       `json:"shim_parent_pid"`
	ShimParentName      string    `json:"shim_parent_name"`
	ShimParentStartedAt time.Time `json:"shim_parent_started_at"`
	ShimParentCmdLine   string    `json:"shim_parent_cmdline"`
	// Stdio says whether the origin holds the shim's stdin and stdout, or
	// that this OS cannot check it (procid.Stdio).
	Stdio procid.Stdio `json:"stdio"`
}

// RequesterOf describes a run record for a card. A shim that asks for
// itself because its agent runs in another network namespace is named
// after the process that started it ("claude, through yett mcp"): the
// person knows that program, not "yett"; the executable, the binding and
// the stdio words stay the shim's.
func RequesterOf(r *procid.RunRecord) Requester {
	name := r.Name
	if r.Stdio == procid.StdioOtherNetns && r.ShimParent.Name != "" {
		name = r.ShimParent.Name + ", through yett mcp"
	}
	return Requester{
		Name: name, Executable: r.ExePath, ExeSHA256: r.ExeHash(), Signer: r.Signer,
		PID: r.PID, StartedAt: r.StartTime, Parents: append([]procid.Ancestor(nil), r.Parents...),
		CmdLine: r.CmdLine, Via: r.ShimExePath,
		ShimPID: r.ShimPID, ShimStartedAt: r.ShimStartTime,
		ShimParentPID: r.ShimParent.PID, ShimParentName: r.ShimParent.Name,
		ShimParentStartedAt: r.ShimParent.StartTime, ShimParentCmdLine: r.ShimParent.CmdLine,
		Stdio: r.Stdio,
	}
}

// RunID names a run in cards, sessions and the audit log. It is derived from
// the launch nonce the gateway made, so it is unique per inspection.
func RunID(r *procid.RunRecord) string { return "run-" + r.LaunchNonce.String()[:16] }

// Request is a pending card.
type Request struct {
	ID     string    `json:"id"`
	Kind   Kind      `json:"kind"`
	RunID  string    `json:"run_id"`
	Who    Requester `json:"who"`
	Change Change    `json:"change,omitempty"` // session cards
	// ChangeDetail says in a sentence what Yett knows about this program's
	// other runs ("an earlier run of this program (pid 4242) ended at
	// 14:03:02: it exited"), "" when there is nothing to add.
	ChangeDetail string `json:"change_detail,omitempty"`
	Channel      string `json:"channel"`          // "http"
	Method       string `json:"method,omitempty"` // call cards
	Target       string `json:"target"`           // host[:port] (and path for call cards)
	// Credential is the credential's name (never its value); for an SSH
	// command, the host's name in Yett.
	Credential string `json:"credential,omitempty"`
	// Operation is the named operation a card is about, and Description
	// its "What it does" sentence as the person wrote it ("" otherwise).
	Operation   string `json:"operation,omitempty"`
	Description string `json:"description,omitempty"`
	// Command is an SSH command exactly as it will run; Stdin is the start
	// of what it gets on standard input (at most MaxStdinShown bytes) and
	// StdinBytes its whole size.
	Command    string `json:"command,omitempty"`
	Stdin      string `json:"stdin,omitempty"`
	StdinBytes int    `json:"stdin_bytes,omitempty"`
	// Tool is the upstream MCP server's tool a call card is about
	// ("github.create_issue"); Arguments the start of its arguments as
	// sent (indented JSON, at most MaxArgumentsShown bytes) and
	// ArgumentsBytes their whole size.
	Tool           string `json:"tool,omitempty"`
	Arguments      string `json:"arguments,omitempty"`
	ArgumentsBytes int    `json:"arguments_bytes,omitempty"`
	// Ref is the stable id of the credential or operation a call card is
	// about (Call.Ref), "" for session cards.
	Ref       string    `json:"ref,omitempty"`
	SessionID string    `json:"session_id,omitempty"` // call cards
	CreatedAt time.Time `json:"created_at"`
	Deadline  time.Time `json:"deadline"`
	// AgentStoppedWaiting: the call that asked gave up waiting (its
	// client's own time limit), and the card stays for the retry that
	// names the same call (Call.Join), which the answer then applies to.
	AgentStoppedWaiting bool `json:"agent_stopped_waiting,omitempty"`
	// GrantWords says which calls "Approve calls like this for 10
	// minutes" would let through without a card ("POST requests to
	// api.example.com/repos/a/…"), "" when this card cannot give a grant.
	GrantWords string `json:"grant_words,omitempty"`
	// Reason is, on an access card, the agent's own words for why it needs
	// what it asks for (clipped; the agent's word).
	Reason string `json:"reason,omitempty"`
}

// Session is a live session approval.
type Session struct {
	ID         string    `json:"id"` // the approval id
	BootID     string    `json:"boot_id"`
	RunID      string    `json:"run_id"`
	VaultEpoch uint64    `json:"vault_epoch"`
	ApprovedAt time.Time `json:"approved_at"`
	Surface    string    `json:"surface"`
	// Via is how the approval reached Yett, in full. Not sent to the UI.
	Via     Via       `json:"-"`
	Channel string    `json:"channel"`
	Who     Requester `json:"who"`
	// Run is the full binding. Not sent to the UI.
	Run *procid.RunRecord `json:"-"`
}

// Outcome is how a card ended, for the recent decisions.
type Outcome string

const (
	OutcomeApproved Outcome = "approved"
	OutcomeDenied   Outcome = "denied"
	// OutcomeRefused: the person approved but the approval could not take
	// effect (the vault changed, the audit log refused it, the agent left).
	OutcomeRefused Outcome = "refused"
	OutcomeExpired Outcome = "expired" // nobody answered in time
	// OutcomeWithdrawn: the card went away unanswered because its call or
	// run ended (Decision.Reason says why: the agent exited or cancelled,
	// the vault was locked, Yett stopped).
	OutcomeWithdrawn Outcome = "withdrawn"
)

// Decision is one recent answer to a card (or its expiry): what was asked,
// how it ended, who answered and where. Kept in memory for this boot only.
type Decision struct {
	RequestID  string    `json:"request_id"`
	Kind       Kind      `json:"kind"`
	Who        Requester `json:"who"`
	Change     Change    `json:"change,omitempty"`
	Channel    string    `json:"channel"`
	Method     string    `json:"method,omitempty"`
	Target     string    `json:"target"`
	Credential string    `json:"credential,omitempty"`
	Outcome    Outcome   `json:"outcome"`
	// Reason is why a withdrawn card went away (an audit reason;
	// WithdrawnWords says it in words), "" otherwise.
	Reason string `json:"reason,omitempty"`
	// Surface is where the answer was given ("" for an expiry); By is the
	// local account that answered.
	Surface string    `json:"surface,omitempty"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at"`
	// Grant says which calls the answer let through without a card
	// (Grant.Words) until GrantUntil, when the person approved calls like
	// this one for a while; "" for an answer that covered the card alone.
	Grant      string    `json:"grant,omitempty"`
	GrantUntil time.Time `json:"grant_until,omitzero"`
}

// Update tells subscribers that pending requests or sessions changed; they
// re-read Pending and Sessions.
type Update struct {
	Pending  bool
	Sessions bool
}
