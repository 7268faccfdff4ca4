package app

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/procid"
)

// AgentView is who asks, as the person reads it on a card: facts the
// gateway got from the kernel. The agent's command line is left out on
// purpose: agents are often started with tokens in their arguments, and
// the card must never become the place a secret is shown. The command line
// of the process that started the shim is shown, with what looks like a
// secret hidden by procid, because it may not be the agent at all.
type AgentView struct {
	Name       string `json:"name"`
	Executable string `json:"executable"` // base name of the running file
	Path       string `json:"path"`       // full path, for a tooltip
	Signer     string `json:"signer"`     // the signer, or "unsigned"
	Signed     bool   `json:"signed"`
	PID        int    `json:"pid"`
	// ExeHash is a short prefix of the running file's SHA-256, enough to
	// tell two builds apart at a glance.
	ExeHash   string       `json:"exeHash"`
	StartedAt string       `json:"startedAt"`
	Parents   []ParentView `json:"parents"`
	// Via is the program that connected for the agent (normally the
	// `yett mcp` shim), so a stranger on the socket would show here.
	Via string `json:"via"`
	// ShimPID and ShimStartedAt are the `yett mcp` that connected, and
	// ShimParent the process that started it. They are shown apart from
	// the agent: a program can exec the genuine shim so that its parent is
	// the agent while another process holds its stdio.
	ShimPID       int         `json:"shimPid"`
	ShimStartedAt string      `json:"shimStartedAt"`
	ShimParent    ProcessView `json:"shimParent"`
	// Stdio is procid's word for whether the agent holds the shim's input
	// and output ("held", "held-not-parent", "not-held", "not-checked", "other-netns");
	// StdioText says it to the person, and StdioOK is true only when the
	// agent started the shim and holds both.
	Stdio     string `json:"stdio"`
	StdioText string `json:"stdioText"`
	StdioOK   bool   `json:"stdioOk"`
}

// ParentView is one link of the parent chain, nearest first.
type ParentView struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

// ProcessView is a process shown with its start time and command line.
type ProcessView struct {
	Name      string `json:"name"`
	PID       int    `json:"pid"`
	StartedAt string `json:"startedAt"`
	CmdLine   string `json:"cmdline"`
}

// ApprovalCard is one pending request. Kind "session" asks whether this
// run may use a channel until it ends; kind "call" asks about one call of
// a credential that needs approval every time.
type ApprovalCard struct {
	ID    string    `json:"id"`
	Kind  string    `json:"kind" enum:"ApprovalKind"`
	Agent AgentView `json:"agent"`
	// Change is the broker's reason ("agent restarted"); Headline and
	// Sentence say it in words for the person.
	Change   string `json:"change"`
	Headline string `json:"headline"`
	// Detail says what Yett knows of this program's other runs ("an
	// earlier run of this program (pid 4242) ended at 14:03:02 (it
	// exited)"), "" when there is nothing to add. The card shows it first.
	Detail   string `json:"detail"`
	Sentence string `json:"sentence"`
	// Scope says what approving covers: this run, or this call only.
	Scope      string `json:"scope"`
	Channel    string `json:"channel"`
	Target     string `json:"target"` // host[:port]
	Method     string `json:"method"` // call cards
	Path       string `json:"path"`   // call cards
	Credential string `json:"credential"`
	// Operation is the named operation a card is about, Description what
	// it does in the person's words ("" for other cards).
	Operation   string `json:"operation"`
	Description string `json:"description"`
	// Command is an SSH command exactly as it will run (ssh.exec cards);
	// Stdin is the start of its input and StdinBytes the input's size.
	Command    string `json:"command"`
	Stdin      string `json:"stdin"`
	StdinBytes int    `json:"stdinBytes"`
	// Tool is an upstream MCP server's tool a card is about
	// ("github.create_issue"); Arguments the start of its arguments as
	// they are sent (indented JSON) and ArgumentsBytes their size.
	Tool           string `json:"tool"`
	Arguments      string `json:"arguments"`
	ArgumentsBytes int    `json:"argumentsBytes"`
	Deadline       string `json:"deadline"`
	// SecondsLeft is counted when the card is sent; the UI counts down
	// from the moment it received it.
	SecondsLeft int `json:"secondsLeft"`
	// Verifies: approving this card in the window waits for the person's
	// system verification (their password, or what the desktop offers).
	Verifies bool `json:"verifies"`
	// AgentStoppedWaiting: the agent gave up waiting (its own time limit);
	// the card stays, and the answer applies if it sends the call again.
	AgentStoppedWaiting bool `json:"agentStoppedWaiting"`
	// GrantWords says which calls "Approve calls like this for 10 minutes"
	// would let through without a card ("POST requests to
	// api.example.com/repos/a/…"), "" when this card cannot give one;
	// GrantMinutes is how long such a grant lasts.
	GrantWords   string `json:"grantWords"`
	GrantMinutes int    `json:"grantMinutes"`
	// Program groups the session cards of runs of one program asking for
	// the same thing (its running file's hash, the channel and the
	// target): cards with the same Program can be answered in one action
	// (AnswerRuns), each still its own approval of its own run. "" for
	// call cards, which are answered one by one.
	Program string `json:"program"`
	// Reason is, on an access card (kind "access"), the agent's words for
	// why it needs what it asks for; Wants says what that is ("a
	// credential for api.github.com").
	Reason string `json:"reason"`
	Wants  string `json:"wants"`
}

// RunsAnswered is what AnswerRuns did: the cards it answered, and those it
// could not (each with why, in words).
type RunsAnswered struct {
	Answered []string        `json:"answered"`
	Failed   []RunAnswerFail `json:"failed"`
}

// RunAnswerFail is one card AnswerRuns could not answer.
type RunAnswerFail struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

// LiveGrant is a time-boxed grant in force: calls like one approved card,
// of one run, let through without a card until Until.
type LiveGrant struct {
	ID        string    `json:"id"`
	SessionID string    `json:"sessionId"`
	Agent     AgentView `json:"agent"`
	// Words says which calls it lets through, Credential with what.
	Words      string `json:"words"`
	Credential string `json:"credential"`
	GivenAt    string `json:"givenAt"`
	Until      string `json:"until"`
	// Uses counts the calls it let through so far.
	Uses int `json:"uses"`
}

// LiveSession is a session approval in force: one run of one process.
type LiveSession struct {
	ID         string    `json:"id"`
	Agent      AgentView `json:"agent"`
	Channel    string    `json:"channel"`
	ApprovedAt string    `json:"approvedAt"`
	// Surface is where the person approved it ("desktop card", "terminal",
	// "notification").
	Surface    string `json:"surface"`
	VaultEpoch uint64 `json:"vaultEpoch"`
}

// ApprovalState is the payload of the approval:changed event.
type ApprovalState struct {
	Cards     []ApprovalCard `json:"cards"`
	Sessions  []LiveSession  `json:"sessions"`
	Decisions []DecisionView `json:"decisions"`
	Grants    []LiveGrant    `json:"grants"`
}

// DecisionView is one recent answer (or expiry): who asked for what, how
// it ended, and who answered where.
type DecisionView struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind" enum:"ApprovalKind"`
	Agent   AgentView `json:"agent"`
	Change  string    `json:"change"`
	Channel string    `json:"channel"`
	Method  string    `json:"method"`
	Target  string    `json:"target"`
	// Credential names what the card was for (a credential, an SSH host,
	// an operation's account), "" when the card named none.
	Credential string `json:"credential"`
	// Outcome is "approved", "denied", "refused" (approved, but it could
	// not take effect), "expired" or "withdrawn" (it went away unanswered:
	// Why says why).
	Outcome string `json:"outcome" enum:"DecisionOutcome"`
	// Why says in words why a withdrawn card went away ("the agent
	// exited"), "" for the other outcomes.
	Why string `json:"why"`
	// Where is the surface in words ("in the window", "from a
	// notification", "at the yett serve terminal"), "" for an expiry; By
	// the local account that answered.
	Where string `json:"where"`
	By    string `json:"by"`
	At    string `json:"at"`
	// Grant says which calls the answer let through without a card until
	// GrantUntil (RFC 3339), when the person approved calls like this one
	// for a while; both "" for an answer that covered the card alone.
	Grant      string `json:"grant"`
	GrantUntil string `json:"grantUntil"`
}

// whereWords says where a card was answered, as the person reads it.
func whereWords(surface string) string {
	switch surface {
	case approval.SurfaceApp:
		return "in the window"
	case approval.SurfaceNotification:
		return "from a notification"
	case approval.SurfaceTerminal:
		return "at the yett serve terminal"
	case "":
		return ""
	}
	return surface
}

func decisionView(d approval.Decision) DecisionView {
	v := DecisionView{
		ID: d.RequestID, Kind: string(d.Kind), Agent: agentView(d.Who), Change: string(d.Change), Channel: d.Channel,
		Method: d.Method, Target: d.Target, Credential: d.Credential, Outcome: string(d.Outcome), Where: whereWords(d.Surface), By: d.By,
		At: d.At.UTC().Format(time.RFC3339), Why: withdrawnWhy(d), Grant: d.Grant,
	}
	if d.Grant != "" {
		v.GrantUntil = d.GrantUntil.UTC().Format(time.RFC3339)
	}
	return v
}

func withdrawnWhy(d approval.Decision) string {
	if d.Outcome != approval.OutcomeWithdrawn {
		return ""
	}
	return approval.WithdrawnWords(d.Reason)
}

// shortHashLen is how many hex digits of the executable hash a card shows.
const shortHashLen = 12

func agentView(r approval.Requester) AgentView {
	v := AgentView{
		Name:    r.Name,
		Path:    r.Executable,
		Signer:  r.Signer,
		Signed:  signed(r.Signer),
		PID:     r.PID,
		ExeHash: shortHash(r.ExeSHA256),
		Via:     r.Via,
		Parents: make([]ParentView, 0, len(r.Parents)),
	}
	if r.Executable != "" {
		v.Executable = filepath.Base(r.Executable)
	}
	if v.Signer == "" {
		v.Signer = procid.SignerUnsigned
	}
	if !r.StartedAt.IsZero() {
		v.StartedAt = r.StartedAt.UTC().Format(time.RFC3339)
	}
	for _, p := range r.Parents {
		v.Parents = append(v.Parents, ParentView{Name: p.Name, PID: p.PID})
	}
	v.ShimPID, v.ShimStartedAt = r.ShimPID, rfc3339(r.ShimStartedAt)
	v.ShimParent = ProcessView{Name: r.ShimParentName, PID: r.ShimParentPID, StartedAt: rfc3339(r.ShimParentStartedAt), CmdLine: r.ShimParentCmdLine}
	v.Stdio = string(r.Stdio)
	v.StdioText, v.StdioOK = r.StdioWords()
	return v
}

func signed(signer string) bool {
	return signer != "" && signer != procid.SignerUnsigned && signer != procid.SignerNotChecked
}

// shortHash turns "sha256:<64 hex>" into "sha256:<12 hex>".
func shortHash(h string) string {
	algo, hexPart, ok := strings.Cut(h, ":")
	if !ok {
		algo, hexPart = "sha256", h
	}
	if len(hexPart) > shortHashLen {
		hexPart = hexPart[:shortHashLen]
	}
	if hexPart == "" {
		return ""
	}
	return algo + ":" + hexPart
}

func cardView(r approval.Request, now time.Time) ApprovalCard {
	c := ApprovalCard{
		ID: r.ID, Kind: string(r.Kind), Agent: agentView(r.Who), Change: string(r.Change), Detail: sentence(r.ChangeDetail),
		Channel: r.Channel, Target: r.Target, Method: r.Method, Credential: r.Credential,
		Operation: r.Operation, Description: r.Description, Command: r.Command, Stdin: r.Stdin, StdinBytes: r.StdinBytes,
		Tool: r.Tool, Arguments: r.Arguments, ArgumentsBytes: r.ArgumentsBytes,
		Headline: r.Headline(), Sentence: r.Sentence(), Scope: r.Scope(),
		Deadline: r.Deadline.UTC().Format(time.RFC3339), SecondsLeft: secondsLeft(r.Deadline, now),
		AgentStoppedWaiting: r.AgentStoppedWaiting,
		GrantWords:          r.GrantWords,
	}
	if r.GrantWords != "" {
		c.GrantMinutes = int(approval.GrantDuration / time.Minute)
	}
	c.Program = programOf(r)
	if r.Kind == approval.KindAccess {
		c.Reason, c.Wants = r.Reason, approval.AccessWords(r.Channel, r.Target)
	}
	if r.Kind == approval.KindCall && r.Command == "" && r.Tool == "" {
		// Call cards carry host and path together; the card shows them apart.
		c.Target, c.Path = r.CallTarget()
	}
	return c
}

func secondsLeft(deadline, now time.Time) int {
	d := deadline.Sub(now).Seconds()
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d))
}

// programOf is the key that groups session cards of runs of one program
// asking for the same thing ("" for a call card, or a run whose file is
// not known).
func programOf(r approval.Request) string {
	if r.Kind != approval.KindSession || r.Who.ExeSHA256 == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(r.Who.ExeSHA256 + "\x00" + r.Who.Executable + "\x00" + r.Channel + "\x00" + r.Target))
	return hex.EncodeToString(sum[:12])
}

func grantView(g approval.Grant) LiveGrant {
	return LiveGrant{
		ID: g.ID, SessionID: g.SessionID, Agent: agentView(g.Who), Words: g.Words, Credential: g.Credential,
		GivenAt: g.GivenAt.UTC().Format(time.RFC3339), Until: g.Until.UTC().Format(time.RFC3339), Uses: g.Uses,
	}
}

func sessionView(s approval.Session) LiveSession {
	return LiveSession{
		ID: s.ID, Agent: agentView(s.Who), Channel: s.Channel,
		ApprovedAt: s.ApprovedAt.UTC().Format(time.RFC3339), Surface: s.Surface, VaultEpoch: s.VaultEpoch,
	}
}
