package app

import (
	"fmt"
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
	// and output ("held", "held-not-parent", "not-held", "not-checked");
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
	Kind  string    `json:"kind"`
	Agent AgentView `json:"agent"`
	// Change is the broker's reason ("agent restarted"); Headline and
	// Sentence say it in words for the person.
	Change   string `json:"change"`
	Headline string `json:"headline"`
	// Detail says what Yett knows of this program's other runs ("an
	// earlier run of this program (pid 4242) ended at 14:03:02 (it
	// exited)"), "" when there is nothing to add. The card shows it first.
	Detail     string `json:"detail"`
	Sentence   string `json:"sentence"`
	Channel    string `json:"channel"`
	Target     string `json:"target"` // host[:port]
	Method     string `json:"method"` // call cards
	Path       string `json:"path"`   // call cards
	Credential string `json:"credential"`
	Deadline   string `json:"deadline"`
	// SecondsLeft is counted when the card is sent; the UI counts down
	// from the moment it received it.
	SecondsLeft int `json:"secondsLeft"`
}

// LiveSession is a session approval in force: one run of one process.
type LiveSession struct {
	ID         string    `json:"id"`
	Agent      AgentView `json:"agent"`
	Channel    string    `json:"channel"`
	ApprovedAt string    `json:"approvedAt"`
	// Surface is where the person approved it ("desktop card", "terminal").
	Surface    string `json:"surface"`
	VaultEpoch uint64 `json:"vaultEpoch"`
}

// ApprovalState is the payload of the approval:changed event.
type ApprovalState struct {
	Cards    []ApprovalCard `json:"cards"`
	Sessions []LiveSession  `json:"sessions"`
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
		Deadline: r.Deadline.UTC().Format(time.RFC3339), SecondsLeft: secondsLeft(r.Deadline, now),
	}
	if r.Kind == approval.KindCall {
		// Call cards carry host and path together; the card shows them apart.
		if i := strings.IndexByte(r.Target, '/'); i >= 0 {
			c.Target, c.Path = r.Target[:i], r.Target[i:]
		}
		c.Headline = "Approve this call?"
		c.Sentence = callSentence(c)
		return c
	}
	c.Headline, c.Sentence = changeWords(r.Change, c.Target, c.Agent)
	return c
}

func secondsLeft(deadline, now time.Time) int {
	d := deadline.Sub(now).Seconds()
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d))
}

// changeWords says what broke continuity and what approving does, so the
// person can tell a restart from a first request (seed 000: a vague "the
// session expired" teaches people to click without reading).
func changeWords(change approval.Change, target string, who AgentView) (headline, text string) {
	use := fmt.Sprintf("to use %s for this run.", target)
	switch change {
	case approval.ChangeFirst:
		return "New agent", "This process has not been approved before. Approve it " + use
	case approval.ChangeAgentRestarted:
		return "The agent restarted", "The agent restarted. Approve this newly started process " + use
	case approval.ChangeAnotherRun:
		return "Another run of this agent", "This is another process of a program you approved; each process needs its own approval. Approve this one " + use
	case approval.ChangeGatewayRestarted:
		return "Yett restarted", "Yett's gateway restarted, which ended every earlier approval. Approve this newly connected process " + use
	case approval.ChangeVaultLocked:
		return "The vault was locked", "The vault was locked since this agent was approved, and unlocking did not restore its approval. Approve it again " + use
	case approval.ChangeIdentityChanged:
		return "The agent's identity changed", fmt.Sprintf("This process now runs a different executable (%s). Approve the new identity %s", signerWords(who), use)
	case approval.ChangeReconnected:
		return "The agent reconnected", "The agent's connection to Yett closed and it connected again. Approve it again " + use
	case approval.ChangeRevoked:
		return "You revoked this session", "You revoked this agent's session earlier. Approve it again only if you want it " + use
	default:
		return sentence(string(change)), "Approve this process " + use
	}
}

func signerWords(who AgentView) string {
	if who.Signed {
		return "signed by " + who.Signer
	}
	if who.Signer == procid.SignerNotChecked {
		return "its signature was not checked"
	}
	return "it is unsigned"
}

func callSentence(c ApprovalCard) string {
	path := c.Path
	if path == "" {
		path = "/"
	}
	who := c.Agent.Executable
	if who == "" {
		who = c.Agent.Name
	}
	return fmt.Sprintf("%s wants to send %s %s to %s with the credential “%s”, which needs your approval for every call.",
		who, c.Method, path, c.Target, c.Credential)
}

func sessionView(s approval.Session) LiveSession {
	return LiveSession{
		ID: s.ID, Agent: agentView(s.Who), Channel: s.Channel,
		ApprovedAt: s.ApprovedAt.UTC().Format(time.RFC3339), Surface: s.Surface, VaultEpoch: s.VaultEpoch,
	}
}
