package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/vault"
)

// maxAccessReason bounds the agent's words on an access card.
const maxAccessReason = 500

func requestAccessTool() *mcp.Tool {
	return &mcp.Tool{
		Name: agentapi.ToolRequestAccess,
		Description: "Ask the person for something Yett does not hold for you: a credential for an HTTP host, an SSH host, or a named " +
			"operation. Say which and why. The person sees a card in Yett and adds or chooses it, or refuses; you learn only " +
			"GRANTED (then call http.request, ssh.exec or the operation: its own approvals apply), ALREADY_AVAILABLE, or REFUSED. " +
			"You never send or see a secret. A refused request is not asked again for this run unless you give a new reason.",
		InputSchema: json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"required": ["kind", "target", "reason"],
	"properties": {
		"kind": {"type": "string", "enum": ["http", "ssh", "operation"]},
		"target": {"type": "string", "description": "http: the host (or a URL on it); ssh: the host's name in Yett; operation: its name", "maxLength": 2048},
		"reason": {"type": "string", "description": "why you need it, for the person", "maxLength": 500}
	}
}`),
		OutputSchema: outputSchema(`"kind": {"type": "string"}, "target": {"type": "string"}`),
		Title:        "Ask the person for a credential, host or operation",
		Annotations: &mcp.ToolAnnotations{Title: "Ask the person for a credential, host or operation", IdempotentHint: true,
			OpenWorldHint: hint(false)},
	}
}

// accessAnswer is yett.request_access's structured answer.
type accessAnswer struct {
	outcome
	Kind   string `json:"kind"`
	Target string `json:"target"`
}

// parseAccessArgs reads yett.request_access's arguments: the target in the
// form Yett names it (an HTTP host as host[:port]), the reason clipped to
// printable words.
func parseAccessArgs(raw json.RawMessage) (approval.Access, error) {
	obj, err := toolArgs(raw, "kind", "target", "reason")
	if err != nil {
		return approval.Access{}, err
	}
	var a approval.Access
	for name, dst := range map[string]*string{"kind": &a.Kind, "target": &a.Target, "reason": &a.Reason} {
		v, ok := obj[name]
		if !ok || json.Unmarshal(v, dst) != nil {
			return approval.Access{}, argErr("%s: a string is required", name)
		}
	}
	a.Reason = strings.Join(strings.FieldsFunc(a.Reason, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }), " ")
	if a.Reason == "" || len([]rune(a.Reason)) > maxAccessReason {
		return approval.Access{}, argErr("reason: say in at most %d characters why you need it", maxAccessReason)
	}
	a.Target = strings.TrimSpace(a.Target)
	switch a.Kind {
	case "http":
		raw := a.Target
		if !strings.Contains(raw, "://") {
			raw = "https://" + raw + "/"
		}
		u, err := target.Parse(raw)
		if err != nil {
			return approval.Access{}, argErr("target: an HTTP host such as api.example.com, or a URL on it")
		}
		a.Target = u.Authority()
	case "ssh", "operation":
		if a.Target == "" || len(a.Target) > maxNameLen || strings.ContainsFunc(a.Target, func(r rune) bool { return !unicode.IsPrint(r) }) {
			return approval.Access{}, argErr("target: the %s's name", a.Kind)
		}
	default:
		return approval.Access{}, argErr("kind: one of http, ssh, operation")
	}
	return a, nil
}

// available says whether Yett already holds what a asks for.
func (g *Gateway) available(a approval.Access) bool {
	switch a.Kind {
	case "http":
		for _, scheme := range []string{"https://", "http://"} {
			if u, err := target.Parse(scheme + a.Target + "/"); err == nil {
				if _, err := g.vault.Credentials().For(u); err == nil {
					return true
				}
			}
		}
	case "ssh":
		_, err := g.vault.SSHHosts().ByName(a.Target)
		return err == nil
	case "operation":
		if g.ops != nil {
			_, ok := g.ops.LookupTool(a.Target)
			return ok
		}
	}
	return false
}

// requestAccess is yett.request_access's pipeline: the vault gate, the
// arguments, the live process, then a card in the window (recorded before
// it shows and when it is answered). It never gives a session, a
// credential or a secret: the agent learns the answer only.
func (c *conn) requestAccess(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := c.g
	if g.vault.Status().State != vault.StateUnlocked {
		return g.refuse(c, &audit.Action{Channel: "access"}, "", refusedLocked), nil
	}
	a, err := parseAccessArgs(req.Params.Arguments)
	if err != nil {
		return g.refuse(c, &audit.Action{Channel: "access"}, "", &refusal{agentapi.CodeInvalid, audit.ReasonInvalidRequest, publicArgError(err)}), nil
	}
	act := &audit.Action{Channel: "access", Operation: a.Kind, Target: a.Target}
	if r := c.checkIdentity(); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	answer := func(code, text string, isError bool) *mcp.CallToolResult {
		o := outcomeOf(code)
		o.Message = text
		ans := accessAnswer{outcome: o, Kind: a.Kind, Target: a.Target}
		if isError {
			return o.refusedAs(ans)
		}
		return toolAnswer(code+": "+text+"\n", ans, false)
	}
	if g.available(a) {
		return answer(agentapi.CodeAlreadyAvailable, fmt.Sprintf("Yett already holds %s: call the tool for it; its own approvals apply", approval.AccessWords(a.Kind, a.Target)), false), nil
	}
	b := c.current()
	facts := &audit.AccessFacts{Kind: a.Kind, Target: a.Target, Why: a.Reason}
	ticket, err := g.broker.RequestAccess(b.rec, a)
	if errors.Is(err, approval.ErrAlreadyRefused) {
		return answer(agentapi.CodeRefused+" "+agentapi.DetailAlreadyRefused, "the person refused this request already; ask again only with a new reason", true), nil
	}
	if err != nil {
		return answer(agentapi.CodeUnavailable, "Yett cannot show the person a card now", true), nil
	}
	if _, err := g.audit.Append(ctx, audit.Event{
		Type: audit.EventAccessRequested, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: g.vault.Epoch(),
		Run: runBinding(b.id, b.rec), Access: facts,
	}); err != nil {
		ticket.Withdraw()
		return answer(agentapi.CodeAuditUnavailable, "Yett's audit log cannot record the request, so it was not shown", true), nil
	}
	stop := g.waitingNotice(ctx, "your request for access", ticket.Deadline())
	_, err = ticket.Wait(ctx)
	stop()
	ok := err == nil
	var refused *refusal // why it was not granted
	reason := audit.Reason("")
	if !ok {
		refused = approvalRefusal(err)
		reason = refused.reason
	}
	g.audit.Append(context.Background(), audit.Event{
		Type: audit.EventAccessAnswered, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: g.vault.Epoch(),
		Run: runBinding(b.id, b.rec), Access: facts, Success: &ok, Reason: reason,
	})
	switch {
	case ok:
		return answer(agentapi.CodeGranted, fmt.Sprintf("the person says %s is set up: call the tool for it now; its own approvals apply", approval.AccessWords(a.Kind, a.Target)), false), nil
	case errors.Is(err, approval.ErrDenied):
		return answer(agentapi.CodeRefused+" "+agentapi.DetailPersonRefused, "the person refused; do not ask again for this without a new reason", true), nil
	}
	return answer(refused.code, refused.text, true), nil
}
