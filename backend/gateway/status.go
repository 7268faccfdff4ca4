package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
)

// fateLine is the code for what happened to a journaled call, from durable
// facts only.
func fateLine(g *Gateway, e journal.Entry) string {
	switch e.State {
	case journal.StateResult:
		if e.Result.Class == string(audit.ResultTransport) || e.Result.Class == string(audit.ResultUnknown) {
			return CodeStatusUnknown
		}
		return fmt.Sprintf("%s status=%d", CodeCompleted, e.Result.Status)
	case journal.StateDispatched:
		if e.BootID != g.bootID {
			return CodeStatusUnknown // sent, then the gateway stopped before the outcome
		}
		return CodeInProgress
	case journal.StateIntent:
		if e.BootID != g.bootID {
			return CodeRetrySafe // durable proof: never marked dispatched
		}
		return CodeInProgress
	case journal.StateNotDispatched:
		return CodeRetrySafe
	}
	return CodeStatusUnknown
}

type statusAnswer struct {
	IdempotencyKey string `json:"idempotency_key"`
	Fate           string `json:"fate"`
	Authority      string `json:"authority"`
	Method         string `json:"method,omitempty"`
	Target         string `json:"target,omitempty"`
	Status         int    `json:"status,omitempty"`
	ResponseBytes  int64  `json:"response_bytes,omitempty"`
	ResponseSHA256 string `json:"response_sha256,omitempty"`
}

// status answers yett.status from the journal and the run's authority. It
// is a built-in: it works while the vault is locked and never acts.
func (c *conn) status(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := c.g
	key, err := parseStatusArgs(req.Params.Arguments)
	if err != nil {
		return toolError(CodeInvalid, "%s", publicArgError(err)), nil
	}
	authority := "OK"
	if _, ok := g.broker.Valid(c.run); !ok {
		if _, reauth := g.changeFor(ctx, c); reauth != "" {
			authority = CodeReauth + " " + reauth
		} else {
			authority = "APPROVAL_REQUIRED"
		}
	}
	e, err := g.journal.Lookup(ctx, c.run.ExeHash(), key)
	if errors.Is(err, journal.ErrNotFound) {
		return toolText(fmt.Sprintf("%s\nauthority: %s\nno call with this idempotency_key from this program was accepted by Yett (a call refused while the vault was locked is not kept)", CodeNotFound, authority)), nil
	}
	if err != nil {
		return toolError(CodeUnavailable, "the activity journal could not be read"), nil
	}
	ans := statusAnswer{IdempotencyKey: key, Fate: fateLine(g, e), Authority: authority, Method: e.Method, Target: e.Target}
	if e.State == journal.StateResult {
		ans.Status, ans.ResponseBytes, ans.ResponseSHA256 = e.Result.Status, e.Result.ResponseBytes, e.Result.ResponseSHA256
	}
	out, _ := json.Marshal(ans)
	return toolText(ans.Fate + "\n" + string(out)), nil
}
