package approval

import (
	"fmt"
	"os/user"
	"path/filepath"
	"strings"
	"sync"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/procid"
)

// StdioWords says to the person who holds the shim's input and output: the
// process that writes into `yett mcp` is the one that acts, whoever started
// it. ok is true only when the agent holds both and nothing is amiss. The
// app's cards and `yett serve`'s terminal say the same words.
func (r Requester) StdioWords() (text string, ok bool) {
	starter := fmt.Sprintf("%s (pid %d)", orUnknown(r.ShimParentName), r.ShimParentPID)
	switch r.Stdio {
	case procid.StdioHeld:
		if r.ShimParentPID == r.PID {
			return "This process started yett mcp and holds its input and output.", true
		}
		return fmt.Sprintf("This process holds yett mcp's input and output; it started yett mcp through %s.", starter), true
	case procid.StdioHeldNotParent:
		return fmt.Sprintf("yett mcp was started by %s, but this process holds its input and output: this process asks, not the one that started yett mcp.", starter), false
	case procid.StdioNotHeld:
		return fmt.Sprintf("yett mcp was started by %s, which does not hold its input and output, and no single process Yett can name does: yett mcp asks for itself, for as long as it runs.", starter), false
	case procid.StdioOtherNetns:
		return fmt.Sprintf("yett mcp was started by %s, which runs in another network namespace (a container or a sandbox): there the kernel does not tell Yett who holds yett mcp's input and output, so yett mcp asks for itself, for as long as it runs.", starter), false
	case procid.StdioNotChecked:
		return "Who holds yett mcp's input and output is not checked on this OS.", false
	}
	return "", false
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown process"
	}
	return s
}

// localUser is the account that answers cards in this process (the
// recent decisions name it); "" when the OS will not say.
var localUser = sync.OnceValue(func() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
})

// Headline says in a few words why a card is shown: the change for a
// session card, the question for a per-call card. The app's cards and the
// notifications say the same words.
func (r Request) Headline() string {
	if r.Kind == KindAccess {
		return "An agent asks for access"
	}
	if r.Kind == KindCall {
		return "Approve this call?"
	}
	h, _ := r.changeWords()
	return h
}

// Sentence says what changed and what approving does (seed 000: a vague
// "the session expired" teaches people to click without reading).
func (r Request) Sentence() string {
	if r.Kind == KindAccess {
		return fmt.Sprintf("%s asks for %s, which Yett does not hold for it. Add or choose what it needs and say it is set up, or refuse. It never sees a secret either way, and its calls still ask as any call does.",
			r.Who.Program(), AccessWords(r.Channel, r.Target))
	}
	if r.Kind == KindCall && r.Command != "" {
		return fmt.Sprintf("%s wants to run a command on the SSH host “%s” (%s), which needs your approval for every command. Read the command below: it runs exactly as shown.",
			r.Who.Program(), r.Credential, r.Target)
	}
	if r.Kind == KindCall && r.Tool != "" {
		return fmt.Sprintf("%s wants to call the tool %s of the %s, which needs your approval for this tool's calls. Read the arguments below: they are sent exactly as shown.",
			r.Who.Program(), r.Tool, r.Credential)
	}
	if r.Kind == KindCall && r.Operation != "" {
		what := ""
		if r.Description != "" {
			what = " (“" + r.Description + "”)"
		}
		return fmt.Sprintf("%s wants to call the operation %s%s through the account %s, which needs your approval for every call.",
			r.Who.Program(), r.Operation, what, r.Credential)
	}
	if r.Kind == KindCall {
		host, path := r.CallTarget()
		if path == "" {
			path = "/"
		}
		return fmt.Sprintf("%s wants to send %s %s to %s with the credential “%s”, which needs your approval for every call.",
			r.Who.Program(), r.Method, path, host, r.Credential)
	}
	_, s := r.changeWords()
	return s
}

// Scope says what an approval covers: this run of the process, or this
// one call.
func (r Request) Scope() string {
	if r.Kind == KindAccess {
		return "nothing by itself: the agent is told your answer"
	}
	if r.Kind == KindCall {
		return "this call only"
	}
	return fmt.Sprintf("this run: until pid %d exits, the vault locks or Yett restarts", r.Who.PID)
}

// CallTarget splits a call card's target into host and path ("" when the
// target has no path).
func (r Request) CallTarget() (host, path string) {
	if i := strings.IndexByte(r.Target, '/'); i >= 0 {
		return r.Target[:i], r.Target[i:]
	}
	return r.Target, ""
}

// Program names the asking program as a card does: the running
// executable's base name, or the process name.
func (w Requester) Program() string {
	if w.Executable != "" {
		return filepath.Base(w.Executable)
	}
	return w.Name
}

// SignerWords says who signed the program: "signed by X", "unsigned", or
// that the signature was not checked.
func (w Requester) SignerWords() string {
	switch w.Signer {
	case "", procid.SignerUnsigned:
		return "unsigned"
	case procid.SignerNotChecked:
		return "signature not checked"
	}
	return "signed by " + w.Signer
}

func (r Request) changeWords() (headline, text string) {
	use := fmt.Sprintf("to use %s during this run.", r.Target)
	switch r.Change {
	case ChangeFirst:
		return "New agent", "This process has not been approved before. Approve it " + use
	case ChangeAgentRestarted:
		// The detail, when there is one, already says which run ended and
		// when; the sentence does not say it again.
		if r.ChangeDetail != "" {
			return "The agent restarted", "Approve this newly started process " + use
		}
		return "The agent restarted", "An earlier run of this program ended. Approve this newly started process " + use
	case ChangeAnotherRun:
		if r.ChangeDetail != "" {
			return "Another run of this agent", "Each process needs its own approval. Approve this one " + use
		}
		return "Another run of this agent", "This is another process of a program you approved; each process needs its own approval. Approve this one " + use
	case ChangeGatewayRestarted:
		return "Yett restarted", "Approvals do not survive a restart of Yett. Approve this newly connected process " + use
	case ChangeVaultLocked:
		return "The vault was locked", "Unlocking the vault did not restore this agent's approval. Approve it again " + use
	case ChangeIdentityChanged:
		return "The agent's identity changed", fmt.Sprintf("This process changed what it runs since it was approved, and Yett inspected it again (%s). Approve it as it is now %s", identityWords(r.Who), use)
	case ChangeReconnected:
		return "The agent reconnected", "The agent's connection to Yett closed and it connected again. Approve it again " + use
	case ChangeRevoked:
		return "You revoked this session", "You revoked this agent's session earlier. Approve it again only if you want it " + use
	}
	h := string(r.Change)
	if h != "" {
		h = strings.ToUpper(h[:1]) + h[1:]
	}
	return h, "Approve this process " + use
}

func identityWords(w Requester) string {
	switch w.Signer {
	case "", procid.SignerUnsigned:
		return "it is unsigned"
	case procid.SignerNotChecked:
		return "its signature was not checked"
	}
	return "signed by " + w.Signer
}

// WithdrawnWords says why a card was withdrawn without an answer (a
// Decision with OutcomeWithdrawn), as the person reads it.
func WithdrawnWords(reason string) string {
	switch audit.Reason(reason) {
	case audit.ReasonProcessExited:
		return "the agent exited"
	case ReasonConnectionClosed:
		return "the agent's connection to Yett closed"
	case audit.ReasonVaultStateChanged, audit.ReasonVaultLocked:
		return "the vault was locked or unlocked, which withdraws every card"
	case audit.ReasonCancelled:
		return "the agent stopped waiting (it cancelled the call, or its own timeout ran out)"
	case audit.ReasonIdentityMismatch:
		return "the agent's process changed what it runs"
	case ReasonGatewayStopped:
		return "Yett stopped"
	}
	return "it was withdrawn"
}
