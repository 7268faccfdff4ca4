package gateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
)

// A refusal is one refused call as both its readers see it: the code and
// chosen text the agent reads, and the reason the audit log records. The
// gateway records the reason and answers from the same value, so the two
// cannot tell different stories. The text never carries an internal error's
// text or a secret.
type refusal struct {
	code   string // what the agent branches on: LOCKED, REAUTH_REQUIRED vault_state_changed, ...
	reason audit.Reason
	text   string
}

// refuse records the refusal of a call in the audit log and returns the
// agent's answer, which names the call (once it has an id) and the entry.
func (g *Gateway) refuse(c *conn, act *audit.Action, sessionID string, r *refusal) *mcp.CallToolResult {
	entry := g.denied(c, act, sessionID, r.reason)
	return outcomeOf(r.code).at(act.RequestID, act.IdempotencyRef, entry).refused(r.text)
}

// The refusals every channel shares.
var (
	refusedLocked = &refusal{agentapi.CodeLocked, audit.ReasonVaultLocked,
		"the Yett vault is locked. This call was refused and is not kept: it will not run after unlock. Unlock Yett, then send a new call"}
	refusedJournal = &refusal{agentapi.CodeUnavailable, audit.ReasonJournalUnavailable,
		"Yett could not record this call durably; nothing was sent"}
	refusedCancelled = &refusal{agentapi.CodeDenied, audit.ReasonCancelled,
		"the call was cancelled before it was sent; nothing was sent"}
	refusedAudit = &refusal{agentapi.CodeAuditUnavailable, audit.ReasonAuditUnavailable,
		"Yett's audit log cannot record this call, so it was not sent. RETRY_SAFE previous_action_not_started once the audit log works again"}
	refusedKeyReused = &refusal{agentapi.CodeInvalid + " " + agentapi.DetailKeyReused, audit.ReasonKeyReused,
		"this idempotency_key names an earlier call with a different request; nothing was sent. Use a new key for a new action, and the same key only to retry the very same request"}
	refusedStateChanged = &refusal{agentapi.CodeReauth + " " + agentapi.ReauthVaultStateChanged, audit.ReasonVaultStateChanged,
		"the vault was locked or unlocked while this call waited; nothing was sent"}
	refusedApprovalEnded = &refusal{agentapi.CodeReauth + " " + agentapi.ReauthVaultStateChanged, audit.ReasonVaultStateChanged,
		"the approval ended before the call could use it; nothing was sent"}
)

// refusedIdentity answers a call whose run no longer matches its process.
func refusedIdentity(reason audit.Reason) *refusal {
	return &refusal{agentapi.CodeReauth + " " + agentapi.ReauthProcessChanged, reason,
		"this agent process no longer matches the one Yett inspected; restart the agent's connection to Yett"}
}

// reauthFor is the one mapping from what a card says changed to what the
// agent and the audit log are told, for a change that ended authority this
// very process held (approval.Continuity.OwnAuthorityEnded).
func reauthFor(why approval.Continuity) *refusal {
	code, reason := agentapi.ReauthProcessChanged, audit.ReasonIdentityMismatch
	switch why.Change {
	case approval.ChangeVaultLocked:
		code, reason = agentapi.ReauthVaultStateChanged, audit.ReasonVaultStateChanged
	case approval.ChangeGatewayRestarted:
		code, reason = agentapi.ReauthGatewayRestarted, audit.ReasonGatewayRestarted
	}
	return &refusal{agentapi.CodeReauth + " " + code, reason, string(why.Change) +
		". Yett is asking the person to approve this agent run again; nothing was sent. " +
		"After approval, check earlier calls with yett.status and send a new call"}
}

// approvalRefusal answers a call whose card was not approved.
func approvalRefusal(err error) *refusal {
	switch {
	case errors.Is(err, approval.ErrDenied):
		return &refusal{agentapi.CodeDenied, audit.ReasonUserDenied, "the person denied this request; nothing was sent"}
	case errors.Is(err, approval.ErrTimeout):
		return &refusal{agentapi.CodeApprovalTimeout, audit.ReasonApprovalTimeout, "nobody answered the approval in time; nothing was sent"}
	case errors.Is(err, approval.ErrAuditUnavailable):
		return &refusal{agentapi.CodeAuditUnavailable, audit.ReasonAuditUnavailable, "Yett's audit log could not record the approval; nothing was sent"}
	case errors.Is(err, approval.ErrWithdrawn):
		return &refusal{agentapi.CodeWithdrawn, audit.ReasonWithdrawn,
			"the approval request was withdrawn (the agent exited, or the vault was locked or unlocked); nothing was sent"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &refusal{agentapi.CodeDenied, audit.ReasonCancelled, "the call was cancelled while waiting for approval; nothing was sent"}
	}
	return &refusal{agentapi.CodeUnavailable, audit.ReasonPolicy, "the approval could not be asked; nothing was sent"}
}
