package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
)

// fateLine is the code for what happened to a journaled call, from durable
// facts only.
func fateLine(g *Gateway, e journal.Entry) string {
	switch e.State {
	case journal.StateResult:
		if e.Result.Class == string(audit.ResultTransport) || e.Result.Class == string(audit.ResultUnknown) {
			return agentapi.CodeStatusUnknown
		}
		if e.Method == MethodSSH {
			if e.Result.Class == classSignal {
				return fmt.Sprintf("%s signal=%s", agentapi.CodeCompleted, signalName(e.Result.Status))
			}
			return fmt.Sprintf("%s exit=%d", agentapi.CodeCompleted, e.Result.Status)
		}
		if e.Method == MethodUpstream {
			// An upstream tool's result has no status: its class says
			// whether the server called it an error.
			if e.Result.Class == string(audit.ResultSuccess) {
				return agentapi.CodeCompleted
			}
			return fmt.Sprintf("%s tool_error=%s", agentapi.CodeCompleted, e.Result.Class)
		}
		return fmt.Sprintf("%s status=%d", agentapi.CodeCompleted, e.Result.Status)
	case journal.StateDispatched:
		if e.BootID != g.bootID {
			return agentapi.CodeStatusUnknown // sent, then the gateway stopped before the outcome
		}
		return agentapi.CodeInProgress
	case journal.StateIntent:
		if e.BootID != g.bootID {
			return agentapi.CodeRetrySafe // durable proof: never marked dispatched
		}
		return agentapi.CodeInProgress
	case journal.StateNotDispatched:
		return agentapi.CodeRetrySafe
	}
	return agentapi.CodeStatusUnknown
}

type statusAnswer struct {
	outcome
	Fate           string `json:"fate"`
	Authority      string `json:"authority"`
	Method         string `json:"method,omitempty"`
	Target         string `json:"target,omitempty"`
	Status         int    `json:"status,omitempty"`
	ExitCode       *int   `json:"exit_code,omitempty"` // an SSH command's
	Signal         string `json:"signal,omitempty"`    // an SSH command's
	ResponseBytes  int64  `json:"response_bytes,omitempty"`
	ResponseSHA256 string `json:"response_sha256,omitempty"`
}

// status answers yett.status from the journal and the run's authority. It
// is a built-in: it works while the vault is locked and never acts. It tells
// the fate of a call only to a run whose session may see it: a run with a
// valid session sees the calls of its program (its own, and those of
// earlier runs a person approved before it). Any other run, which includes
// every run while the vault is locked, is told only what it needs to be
// approved: not whether the key exists, nor anything about the call.
func (c *conn) status(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := c.g
	key, err := parseStatusArgs(req.Params.Arguments)
	if err != nil {
		return toolError(agentapi.CodeInvalid, "%s", publicArgError(err)), nil
	}
	// A process that changed what it runs is another run before it may
	// read anything (checkIdentity inspects it again).
	c.checkIdentity()
	run := c.current().rec
	if _, ok := g.broker.Valid(run); !ok {
		authority := "this agent run is not approved"
		if why := g.continuity(ctx, run); why.OwnAuthorityEnded() {
			authority = reauthFor(why).code
		}
		return toolText(outcome{Outcome: agentapi.CodeApprovalRequired, IdempotencyKey: key}, fmt.Sprintf("%s\nauthority: %s\nYett tells what happened to a call only to an approved agent run, "+
			"and asking with yett.status raises no card. Only a call that needs a credential asks the person. "+
			"Careful: sending the original call again with the same idempotency_key is that call, not a query: "+
			"once the person approves this run, Yett performs it if no call with this key was sent before, "+
			"and if one was, answers with that call's fate without sending it twice", agentapi.CodeApprovalRequired, authority)), nil
	}
	e, err := g.journal.Lookup(ctx, run.ExeHash(), key)
	if errors.Is(err, journal.ErrNotFound) {
		// Yett records a call as dispatched, durably, before it sends it:
		// no record means nothing with this key left through Yett.
		return toolText(outcome{Outcome: agentapi.CodeNotFound, Detail: "previous_action_not_started", IdempotencyKey: key}, fmt.Sprintf("%s\n%s: Yett holds no record of a call with this idempotency_key from this program, "+
			"and it records every call before sending it, so nothing with this key was sent (a call refused while the vault "+
			"was locked is not kept)\nauthority: OK", agentapi.CodeNotFound, agentapi.CodeRetrySafe)), nil
	}
	if err != nil {
		return toolError(agentapi.CodeUnavailable, "the activity journal could not be read"), nil
	}
	fate := fateLine(g, e)
	ans := statusAnswer{outcome: outcomeOf(fate).at(e.ID, key, -1), Fate: fate, Authority: "OK", Method: e.Method, Target: e.Target}
	if e.State == journal.StateResult {
		ans.Status, ans.ResponseBytes, ans.ResponseSHA256 = e.Result.Status, e.Result.ResponseBytes, e.Result.ResponseSHA256
		if e.Method == MethodSSH {
			ans.Status = 0
			switch e.Result.Class {
			case classSignal:
				ans.Signal = signalName(e.Result.Status)
			case string(audit.ResultSuccess), string(audit.ResultServerError):
				code := e.Result.Status
				ans.ExitCode = &code
			}
		}
	}
	return toolAnswer(ans.Fate+"\n", ans, false), nil
}
