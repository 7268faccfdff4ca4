package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/procid"
	"github.com/yettdev/yett/backend/vault"
)

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// httpRequest is the decision pipeline. Each step is final: a refusal is
// answered at once and nothing of the call is kept for later.
func (c *conn) httpRequest(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := c.g
	// 1. Vault gate. Nothing is parsed, kept or shown before it.
	if g.vault.Status().State != vault.StateUnlocked {
		g.denied(c, &audit.Action{Channel: "http"}, "", audit.ReasonVaultLocked)
		return toolError(CodeLocked, lockedText), nil
	}
	// 2. A valid request with a credential bound to its host and path.
	call, err := parseHTTPArgs(req.Params.Arguments)
	if err != nil {
		g.denied(c, &audit.Action{Channel: "http"}, "", audit.ReasonInvalidRequest)
		return toolError(CodeInvalid, "%s", publicArgError(err)), nil
	}
	act := &audit.Action{Channel: "http", Operation: call.req.Method, Target: call.host}
	cv, sec, err := g.vault.CredentialFor(call.target)
	if sec != nil {
		sec.Wipe() // only the binding matters here; the secret is read again right before dispatch
	}
	if res := credentialRefusal(err); res != nil {
		g.denied(c, act, "", reasonForCredentialError(err))
		return res, nil
	}
	act.CredentialRef = cv.ID
	if cv.Injection.Format == vault.InjectHeader && hasHeader(call.req.Headers, cv.Injection.HeaderName) {
		g.denied(c, act, "", audit.ReasonInvalidRequest)
		return toolError(CodeInvalid, "headers: the credential's header is set by Yett only"), nil
	}
	// 3. The run still matches the live process.
	if res := c.identityChanged(act); res != nil {
		return res, nil
	}
	// 4. A session approval valid for this boot, epoch and launch nonce.
	sess, res := c.session(ctx, act)
	if res != nil {
		return res, nil
	}
	// 5. Per-call approval, never replaced by the session.
	if cv.Approval == vault.ApprovalPerCall {
		err := g.broker.AskCall(ctx, c.run, sess.ID, "http", call.req.Method, call.host+call.path, cv.Name)
		if err != nil {
			code, reason, text := approvalRefusal(err)
			g.denied(c, act, sess.ID, reason)
			return toolError(code, "%s", text), nil
		}
	}
	return g.dispatch(ctx, c, call, cv, sess, act), nil
}

// identityChanged checks that the run still matches the live process and
// returns the answer to give when it does not. The connection stays (the
// answer must reach the agent), but the run is over: every later call fails
// this check again, and the broker refuses new cards for an ended run.
func (c *conn) identityChanged(act *audit.Action) *mcp.CallToolResult {
	g := c.g
	err := g.insp.Matches(c.run)
	if err == nil {
		return nil
	}
	reason := audit.ReasonIdentityMismatch
	if errors.Is(err, procid.ErrProcessGone) {
		reason = audit.ReasonProcessExited
	}
	g.broker.EndRun(c.runID, reason)
	g.denied(c, act, "", reason)
	return toolError(CodeReauth+" "+ReauthProcessChanged, "this agent process no longer matches the one Yett inspected; restart the agent's connection to Yett")
}

// session returns the run's valid session, or the answer to give instead.
func (c *conn) session(ctx context.Context, act *audit.Action) (approval.Session, *mcp.CallToolResult) {
	g := c.g
	if s, ok := g.broker.Valid(c.run); ok {
		return s, nil
	}
	change, reauth := g.changeFor(ctx, c)
	tk, err := g.broker.RequestSession(c.run, change, act.Channel, act.Target)
	if err != nil {
		code, reason, text := approvalRefusal(err)
		g.denied(c, act, "", reason)
		return approval.Session{}, toolError(code, "%s", text)
	}
	if tk.New && reauth != "" {
		// Authority changed: say so before any action is presented again.
		// The card asks the person about this run; the call itself is over.
		g.denied(c, act, "", audit.Reason(reauth))
		return approval.Session{}, toolError(CodeReauth+" "+reauth,
			"%s. Yett is asking the person to approve this agent run again; nothing was sent. "+
				"After approval, check earlier calls with yett.status and send a new call", change)
	}
	if _, err := tk.Wait(ctx); err != nil {
		code, reason, text := approvalRefusal(err)
		g.denied(c, act, "", reason)
		return approval.Session{}, toolError(code, "%s", text)
	}
	s, ok := g.broker.Valid(c.run)
	if !ok {
		g.denied(c, act, "", audit.ReasonVaultStateChanged)
		return approval.Session{}, toolError(CodeReauth+" "+ReauthVaultStateChanged, "the approval ended before the call could use it")
	}
	return s, nil
}

// changeFor says what changed for a run without a valid session, and the
// REAUTH reason when it is an authority change rather than a first request.
func (g *Gateway) changeFor(ctx context.Context, c *conn) (approval.Change, string) {
	ch, ok := g.broker.ChangeFor(c.run)
	if !ok {
		ev, err := g.journal.EvidenceFor(ctx, g.bootID, c.run.PID, c.run.StartKey, c.run.ExeHash())
		switch {
		case err != nil:
			ch = approval.ChangeFirst
		case ev.SameProcessEarlierBoot:
			ch = approval.ChangeGatewayRestarted
		case ev.SameExecutableApproved:
			ch = approval.ChangeAgentRestarted
		default:
			ch = approval.ChangeFirst
		}
	}
	switch ch {
	case approval.ChangeGatewayRestarted:
		return ch, ReauthGatewayRestarted
	case approval.ChangeVaultLocked:
		return ch, ReauthVaultStateChanged
	case approval.ChangeAgentRestarted, approval.ChangeIdentityChanged:
		return ch, ReauthProcessChanged
	}
	return ch, ""
}

// dispatch sends an http.request with its vault credential.
func (g *Gateway) dispatch(ctx context.Context, c *conn, call *httpCall, cv vault.CredentialView, sess approval.Session, act *audit.Action) *mcp.CallToolResult {
	return g.send(ctx, c, &outgoing{
		req: call.req, host: call.host, path: call.path, key: call.key, credRef: cv.ID,
		credential: func(ctx context.Context) (*action.Credential, func(int), *refusal) {
			cv2, sec, err := g.vault.CredentialFor(call.target)
			if err != nil || cv2.ID != cv.ID || cv2.Version != cv.Version {
				if sec != nil {
					sec.Wipe()
				}
				return nil, nil, &refusal{notSent: "credential_changed", reason: audit.ReasonPolicy,
					answer: toolError(CodeUnavailable, "the credential changed or became unavailable while this call waited; nothing was sent")}
			}
			lent := &lentSecret{v: g.vault, epoch: sess.VaultEpoch, s: sec}
			return &action.Credential{Injection: actionInjection(cv2.Injection), Secret: lent}, func(int) { lent.wipe() }, nil
		},
	}, sess, act)
}

// outgoing is what send sends: an http.request with a vault credential,
// or a named operation with an OAuth lease.
type outgoing struct {
	req       action.Request
	host      string
	path      string
	key       string // "" when the agent gave none
	credRef   string
	operation string // named operation, "" for http.request
	// credential is asked right before dispatch, after every approval and
	// the durable intent: a refusal then means nothing was sent. release
	// gets the HTTP status (0 when nothing came back).
	credential func(ctx context.Context) (*action.Credential, func(status int), *refusal)
}

// refusal is a credential that could not be had right before dispatch.
type refusal struct {
	notSent string // journal reason
	reason  audit.Reason
	answer  *mcp.CallToolResult
}

// send runs steps 6-11: journal intent, audit, re-check, dispatched
// (audit, then journal), send, result.
func (g *Gateway) send(ctx context.Context, c *conn, call *outgoing, sess approval.Session, act *audit.Action) *mcp.CallToolResult {
	id := newID("q-")
	key := call.key
	if key == "" {
		key = newID("yk-")
	}
	act.RequestID, act.IdempotencyRef = id, key
	h := sha256.New()
	h.Write([]byte(call.operation + "\n" + call.req.Method + "\n" + call.req.URL + "\n"))
	h.Write(call.req.Body)
	in := journal.Intent{
		ID: id, Scope: c.run.ExeHash(), Key: key, BootID: g.bootID, RunID: c.runID, Method: call.req.Method,
		Target: call.host, Path: call.path, CredentialRef: call.credRef, RequestBytes: int64(len(call.req.Body)),
		RequestSHA256: hex.EncodeToString(h.Sum(nil)),
	}
	// 6. Intent durable.
	prev, err := g.journal.Begin(ctx, in)
	if errors.Is(err, journal.ErrKeyInUse) {
		g.denied(c, act, sess.ID, audit.ReasonPolicy)
		return keyInUseAnswer(g, prev)
	}
	if err != nil {
		g.denied(c, act, sess.ID, audit.Reason("journal_unavailable"))
		return toolError(CodeUnavailable, "Yett could not record this call durably; nothing was sent")
	}
	notSent := func(reason string) { g.journal.NotDispatched(context.WithoutCancel(ctx), id, reason) }
	// 7. Audit entry durable, fail closed.
	if _, err := g.audit.Append(ctx, audit.Event{
		Type: audit.EventActionRequested, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: sess.VaultEpoch,
		SessionID: sess.ID, Run: runBinding(c.runID, c.run), Action: act,
	}); err != nil {
		if ctx.Err() != nil {
			notSent("cancelled")
			return toolError(CodeDenied, "the call was cancelled before it was sent; nothing was sent")
		}
		notSent(string(audit.ReasonAuditUnavailable))
		g.log.Error("audit log refused an action intent; denying", "run", c.runID)
		return toolError(CodeAuditUnavailable, "Yett's audit log cannot record this call, so it was not sent. RETRY_SAFE previous_action_not_started once the audit log works again")
	}
	if g.hookAfterIntent != nil {
		g.hookAfterIntent(key)
	}
	// 8. Epoch and boot re-checked right before dispatch, and the secret
	// read again (it is not held while the person was asked).
	if g.vault.Epoch() != sess.VaultEpoch || sess.BootID != g.bootID || g.broker.BootID() != g.bootID {
		notSent(ReauthVaultStateChanged)
		g.denied(c, act, sess.ID, audit.ReasonVaultStateChanged)
		return toolError(CodeReauth+" "+ReauthVaultStateChanged, "the vault was locked or unlocked while this call waited; nothing was sent")
	}
	cred, release, ref := call.credential(ctx)
	if ref != nil {
		notSent(ref.notSent)
		g.denied(c, act, sess.ID, ref.reason)
		return ref.answer
	}
	status := 0
	defer func() { release(status) }()
	// 9. Dispatched is durable before a byte leaves: first in the audit log
	// (fail closed), then in the journal. In this order a crash between the
	// two leaves the journal at "intent", which answers RETRY_SAFE, and that
	// is true: nothing was sent. The audit entry then records a decision to
	// send with no result after it, which is what happened.
	if _, err := g.audit.Append(ctx, audit.Event{
		Type: audit.EventActionDispatched, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: sess.VaultEpoch,
		SessionID: sess.ID, Run: runBinding(c.runID, c.run), Action: act,
	}); err != nil {
		notSent(string(audit.ReasonAuditUnavailable))
		g.log.Error("audit log refused an action dispatch; denying", "run", c.runID)
		return toolError(CodeAuditUnavailable, "Yett's audit log cannot record this call, so it was not sent. RETRY_SAFE previous_action_not_started once the audit log works again")
	}
	if err := g.journal.Dispatched(ctx, id); err != nil {
		notSent("journal_unavailable")
		return toolError(CodeUnavailable, "Yett could not record this call durably; nothing was sent")
	}
	// 10. Send. The agent going away no longer cancels it: from here the
	// outcome is recorded, not abandoned.
	call.req.IdempotencyKey = key
	start := time.Now()
	resp, err := g.exec.Do(context.WithoutCancel(ctx), call.req, cred)
	if err == nil {
		status = resp.Status
	}
	return g.finish(ctx, c, sess, act, id, key, start, resp, err)
}

func credentialRefusal(err error) *mcp.CallToolResult {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, vault.ErrLocked):
		return toolError(CodeLocked, lockedText)
	case errors.Is(err, vault.ErrNoCredential):
		return toolError(CodeNoCredential, "no credential in Yett is bound to this host and path; the person can add one in Yett")
	case errors.Is(err, vault.ErrAmbiguousCredential):
		return toolError(CodeAmbiguous, "two credentials are bound equally to this host and path; the person must narrow one in Yett")
	default:
		return toolError(CodeUnavailable, "the credential for this host could not be read")
	}
}

func reasonForCredentialError(err error) audit.Reason {
	if errors.Is(err, vault.ErrLocked) {
		return audit.ReasonVaultLocked
	}
	return audit.ReasonPolicy
}

func approvalRefusal(err error) (code string, reason audit.Reason, text string) {
	switch {
	case errors.Is(err, approval.ErrDenied):
		return CodeDenied, audit.ReasonUserDenied, "the person denied this request; nothing was sent"
	case errors.Is(err, approval.ErrTimeout):
		return CodeApprovalTimeout, audit.ReasonApprovalTimeout, "nobody answered the approval in time; nothing was sent"
	case errors.Is(err, approval.ErrAuditUnavailable):
		return CodeAuditUnavailable, audit.ReasonAuditUnavailable, "Yett's audit log could not record the approval; nothing was sent"
	case errors.Is(err, approval.ErrWithdrawn):
		return CodeWithdrawn, audit.ReasonVaultStateChanged, "the approval request was withdrawn (the agent exited, or the vault was locked or unlocked); nothing was sent"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return CodeDenied, audit.Reason("cancelled"), "the call was cancelled while waiting for approval; nothing was sent"
	default:
		return CodeUnavailable, audit.ReasonPolicy, "the approval could not be asked; nothing was sent"
	}
}

func publicArgError(err error) string {
	var ae *errArgs
	if errors.As(err, &ae) {
		return ae.msg
	}
	return "invalid arguments"
}
