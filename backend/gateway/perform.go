package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
)

// A performer is the one action send performs once a call is approved: an
// HTTP request with a vault credential or an OAuth lease (httpAction), or
// an SSH command with a host's key (sshAction). send owns every step the
// channels share (the last checks, the durable intent, the context a vault
// lock cancels); the performer owns its credential, the action itself and
// the words of its outcome.
type performer interface {
	// lend takes the credential, after every approval and the durable
	// intent, right before perform: a refusal then means nothing was sent
	// (send records it so).
	lend(ctx context.Context) *refusal
	// describe fills what the journal records of the action before it
	// leaves: its method, size and the digest its idempotency key stands
	// for.
	describe(in *journal.Intent)
	// perform runs the action under ctx, which the next vault lock
	// cancels, records its outcome durably through d and returns the
	// agent's answer.
	perform(ctx context.Context, d *dispatchedCall) *mcp.CallToolResult
	// release gives back what lend took (wipes a key, returns a lease).
	// send calls it once, after perform or after a refusal that follows a
	// successful lend.
	release()
}

// dispatchedCall is a call whose intent is durable: what its outcome is
// recorded with. ctx is the call's own; records of the outcome are written
// whatever becomes of it.
type dispatchedCall struct {
	g    *Gateway
	c    *conn
	ctx  context.Context
	sess approval.Session
	act  *audit.Action
	id   string
	key  string
	// entry is the audit entry of the outcome (-1 until recorded).
	entry int64
}

// said is outcome o (a code line) about this call and its audit entry.
func (d *dispatchedCall) said(code string) outcome {
	return outcomeOf(code).at(d.id, d.key, d.entry)
}

// notSent records that the action provably did not leave (the journal then
// answers RETRY_SAFE) and answers with r.
func (d *dispatchedCall) notSent(r *refusal) *mcp.CallToolResult {
	if err := d.g.journal.NotSent(context.WithoutCancel(d.ctx), d.id, string(r.reason)); err != nil {
		d.g.log.Error("journal refused a not-sent mark", "request", d.id)
	}
	return d.g.refuse(d.c, d.act, d.sess.ID, r)
}

// outcome records an action's outcome in the journal and the audit log
// and returns without waiting for either to be on disk: the intent was
// durable before anything left, and the outcome rides the next group
// commit (the next call's intent, usually), at the latest within twice
// the stores' ResultDelay (10 ms). So a call's path has one durable step.
// A crash in that window loses only the outcome: yett.status then answers
// STATUS_UNKNOWN for the call and its key stays in use; the audit log
// shows it requested with no result. Every channel's outcome goes through
// here; a record either store refuses is logged (by request id, never a
// value).
func (d *dispatchedCall) outcome(jr journal.Result, ar audit.Result, reason audit.Reason, ssh *audit.SSHFacts) {
	g, bg := d.g, context.WithoutCancel(d.ctx)
	if err := g.journal.FinishSoon(bg, d.id, jr); err != nil {
		g.log.Error("journal refused a result", "request", d.id)
	}
	entry, err := g.audit.AppendSoon(bg, audit.Event{
		Type: audit.EventActionResult, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: d.sess.VaultEpoch,
		SessionID: d.sess.ID, Action: d.act, Reason: reason, Result: &ar, SSH: ssh,
	})
	if err != nil {
		g.log.Error("audit log refused a result", "request", d.id)
		entry = -1
	}
	d.entry = entry
}

// httpAction is an http.request or a named operation: the request of its
// outgoing and the credential it is sent with.
type httpAction struct {
	call     *outgoing
	cred     *action.Credential
	giveBack func(status int)
	status   int // the HTTP status, 0 when nothing came back
}

func (h *httpAction) lend(ctx context.Context) *refusal {
	cred, release, r := h.call.credential(ctx)
	if r != nil {
		return r
	}
	h.cred, h.giveBack = cred, release
	return nil
}

func (h *httpAction) describe(in *journal.Intent) {
	in.Method, in.RequestBytes, in.RequestSHA256 = h.call.req.Method, int64(len(h.call.req.Body)), h.call.digest()
}

func (h *httpAction) release() {
	if h.giveBack != nil {
		h.giveBack(h.status)
	}
}

// perform sends the request. A vault lock cancels it and cuts its
// connection: the outcome is then unknown unless the executor proves
// nothing left.
func (h *httpAction) perform(dctx context.Context, d *dispatchedCall) *mcp.CallToolResult {
	req := h.call.req
	req.IdempotencyKey = d.key
	start := time.Now()
	resp, err := d.g.exec.Do(dctx, req, h.cred)
	if err == nil {
		h.status = resp.Status
	} else if dctx.Err() != nil && !isPreSend(err) {
		return d.cutByLock(start)
	}
	return d.finish(start, resp, err)
}
