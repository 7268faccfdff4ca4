package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/ids"
	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/procid"
	"github.com/yettdev/yett/backend/vault"
)

// httpRequest is http.request's decision pipeline (httpPipeline).
func (c *conn) httpRequest(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return c.httpPipeline(ctx, req, parseHTTPArgs)
}

// httpGet is http.get's: the same pipeline, for GET and HEAD only.
func (c *conn) httpGet(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return c.httpPipeline(ctx, req, parseHTTPGetArgs)
}

// httpPipeline is the decision pipeline of an HTTP call whose arguments
// parse reads. Each step is final: a refusal is answered at once and
// nothing of the call is kept for later.
func (c *conn) httpPipeline(ctx context.Context, req *mcp.CallToolRequest, parse func(json.RawMessage) (*httpCall, error)) (*mcp.CallToolResult, error) {
	g := c.g
	// 1. Vault gate. Nothing of the call is kept; the refusal is audited
	// with the method, host and key it named (never its body or path), so
	// an auditor can match a request sent while locked to its refusal.
	if g.vault.Status().State != vault.StateUnlocked {
		return g.refuse(c, lockedHTTPAction(req.Params.Arguments), "", refusedLocked), nil
	}
	// 2. A valid request with a credential bound to its host and path.
	call, err := parse(req.Params.Arguments)
	if err != nil {
		return g.refuse(c, &audit.Action{Channel: "http"}, "", &refusal{agentapi.CodeInvalid, audit.ReasonInvalidRequest, publicArgError(err)}), nil
	}
	act := &audit.Action{Channel: "http", Operation: call.req.Method, Target: call.host, Path: audit.ClipPath(call.path), IdempotencyRef: call.key}
	cv, err := g.vault.Credentials().For(call.target)
	if err != nil {
		return g.refuse(c, act, "", credentialRefusal(err)), nil
	}
	act.CredentialRef = cv.ID
	if r := g.control(cv.ID); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	if cv.Injection.Format == vault.InjectHeader && hasHeader(call.req.Headers, cv.Injection.HeaderName) {
		return g.refuse(c, act, "", &refusal{agentapi.CodeInvalid, audit.ReasonInvalidRequest, "headers: the credential's header is set by Yett only"}), nil
	}
	// 3. The run still matches the live process.
	if r := c.checkIdentity(); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 4. A session approval valid for this boot, epoch and launch nonce.
	// Its card names the credential the first call would use (by name, as
	// an SSH host's card does), so the answer's confirmation can say what
	// the person let the run use.
	sess, r := c.session(ctx, act, &approval.Call{Channel: act.Channel, Target: act.Target, Credential: cv.Name})
	if r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 5. Per-call approval, never replaced by the session: every call of
	// a per-call credential, every write (not GET or HEAD) of one whose
	// reads pass.
	var via *audit.Via
	if cv.Approval.AsksEachCall(readMethod(call.req.Method)) {
		v, err := g.askCall(ctx, sess, approval.Call{
			Channel: "http", Method: call.req.Method, Target: call.host + call.path, Credential: cv.Name, Ref: cv.ID,
			Join: joinOf(call.key, httpDigest("", call.req)),
		})
		if err != nil {
			return g.refuse(c, act, sess.ID, approvalRefusal(err)), nil
		}
		via = v.Audit()
	}
	return g.dispatch(ctx, c, call, cv, sess, act, via), nil
}

// lockedHTTPAction names a call refused at the vault gate for the audit
// log: its method, host and idempotency key when they are well formed, and
// nothing else. Nothing else of the call is read or kept.
func lockedHTTPAction(raw json.RawMessage) *audit.Action {
	act := &audit.Action{Channel: "http"}
	var a struct {
		Method         string `json:"method"`
		URL            string `json:"url"`
		IdempotencyKey string `json:"idempotency_key"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return act
	}
	if m := strings.ToUpper(a.Method); allowedMethods[m] {
		act.Operation = m
	}
	if u, err := url.Parse(a.URL); err == nil && len(u.Host) <= 255 && !strings.ContainsAny(u.Host, "@/\\ ") {
		act.Target = strings.ToValidUTF8(u.Host, "?")
	}
	act.IdempotencyRef = auditableKey(a.IdempotencyKey)
	return act
}

// auditableKey is k when it is a well-formed idempotency key, else "".
func auditableKey(k string) string {
	if len(k) <= journal.MaxKeyLen && journal.KeyAlphabet(k) {
		return k
	}
	return ""
}

// checkIdentity checks that the run the connection serves still matches
// the live process and returns the refusal to give when it does not.
//
// A process that exited, or whose pid names another process now, is over:
// its run ends, and every later call fails this check again. A process that
// is still the same one (pid and kernel start stamp) but runs another
// program or command line now (an exec) is inspected again at once, and the
// connection serves that new run from here on (rebind): the call goes on to
// the session step, which opens the new run's card at once, naming what
// changed, and answers REAUTH_REQUIRED process_changed if the old run held
// a session; the agent's next calls wait on that card. An agent is never
// left refused with nothing for the person to answer.
func (c *conn) checkIdentity() *refusal {
	b := c.current()
	err := c.g.insp.Matches(b.rec)
	if err == nil {
		return nil
	}
	reason := audit.ReasonIdentityMismatch
	if errors.Is(err, procid.ErrProcessGone) {
		reason = audit.ReasonProcessExited
	}
	c.g.broker.EndRun(b.id, reason)
	if reason == audit.ReasonIdentityMismatch && c.rebind(b) != nil {
		return nil
	}
	return refusedIdentity(reason)
}

// rebind inspects the process behind the connection again after run b
// stopped matching it, and returns the run the connection serves now: the
// new inspection, or the one a concurrent call rebound to first. It returns
// nil when the peer is no longer that same process running a shim Yett
// accepts: the connection is over, as for an exited process.
func (c *conn) rebind(b *boundRun) *boundRun {
	if cur := c.current(); cur != b {
		return cur
	}
	if c.drill {
		return nil
	}
	rec, err := identify(c.g.insp, c.nc)
	if err != nil {
		return nil
	}
	if rec.PID != b.rec.PID || rec.StartKey != b.rec.StartKey || !c.g.allowedShim(rec) {
		rec.Close()
		return nil
	}
	next := &boundRun{rec: rec, id: approval.RunID(rec)}
	if !c.bound.CompareAndSwap(b, next) {
		rec.Close()
		return c.current()
	}
	c.g.log.Info("agent run changed", "run", b.id, "now", next.id, "pid", rec.PID, "exe", rec.Name)
	b.rec.Close()
	return next
}

// sessionStillServed checks, right before a call is recorded, that sess
// belongs to the run the connection serves now. After a rebind (the process
// changed what it runs while the call waited) it does not: the call is
// refused, and the new run's card is opened at once.
func (c *conn) sessionStillServed(ctx context.Context, sess approval.Session, act *audit.Action) *refusal {
	if r := c.checkIdentity(); r != nil {
		return r
	}
	b := c.current()
	if b.id == sess.RunID {
		return nil
	}
	why := c.g.continuity(ctx, b.rec)
	if _, err := c.g.broker.RequestSessionFor(b.rec, why, approval.Call{Channel: act.Channel, Target: act.Target}); err != nil {
		return refusedIdentity(audit.ReasonIdentityMismatch)
	}
	return reauthFor(why)
}

// session returns the run's valid session, or the refusal to give instead.
//
// first is the call the card names when one is raised (an SSH command names
// its command); nil names the action's channel and target.
func (c *conn) session(ctx context.Context, act *audit.Action, first *approval.Call) (approval.Session, *refusal) {
	g := c.g
	if c.drill {
		// Yett's own drill client never holds a session: its call stops
		// here, where an agent's would be approved or ask a person.
		return approval.Session{}, refusedDrill
	}
	run := c.current().rec
	if s, ok := g.broker.Valid(run); ok {
		return s, nil
	}
	why := g.continuity(ctx, run)
	card := approval.Call{Channel: act.Channel, Target: act.Target}
	if first != nil {
		card = *first
	}
	tk, err := g.broker.RequestSessionFor(run, why, card)
	if err != nil {
		return approval.Session{}, approvalRefusal(err)
	}
	if tk.New && why.OwnAuthorityEnded() {
		// This process's own authority ended: say so before any action is
		// presented again. The card asks the person about this run; the
		// call itself is over. A new process of the program, by contrast,
		// waits on its card like any first request.
		return approval.Session{}, reauthFor(why)
	}
	stop := g.waitingNotice(ctx, waitingWhat(why), tk.Deadline())
	_, err = tk.Wait(ctx)
	stop()
	if err != nil {
		return approval.Session{}, approvalRefusal(err)
	}
	s, ok := g.broker.Valid(run)
	if !ok {
		return approval.Session{}, refusedApprovalEnded
	}
	return s, nil
}

// continuity says what changed for a run without a valid session: from the
// broker (this boot's sessions), else from the journal's durable record of
// runs approved in earlier boots, else it is a first request.
func (g *Gateway) continuity(ctx context.Context, run *procid.RunRecord) approval.Continuity {
	if why, ok := g.broker.ChangeFor(run); ok {
		return why
	}
	ev, err := g.journal.EvidenceFor(ctx, g.bootID, run.PID, run.StartKey, run.ExeHash())
	switch {
	case err != nil:
	case ev.SameProcessEarlierBoot:
		return approval.Continuity{Change: approval.ChangeGatewayRestarted,
			Detail: "this process was approved before Yett restarted; approvals do not survive a restart"}
	case ev.SameExecutableApproved:
		// Another process of a program approved before the restart: it did
		// not restart itself, it is a separate run.
		return approval.Continuity{Change: approval.ChangeAnotherRun,
			Detail: "a run of this program was approved before Yett restarted (approvals do not survive a restart). This is a separate process"}
	}
	return approval.Continuity{Change: approval.ChangeFirst}
}

// dispatch sends an http.request with its vault credential.
func (g *Gateway) dispatch(ctx context.Context, c *conn, call *httpCall, cv vault.CredentialView, sess approval.Session, act *audit.Action, via *audit.Via) *mcp.CallToolResult {
	return g.send(ctx, c, &outgoing{
		req: call.req, host: call.host, path: call.path, key: call.key, credRef: cv.ID, approvedVia: via,
		credential: func(ctx context.Context) (*action.Credential, func(int), *refusal) {
			// The one read of the secret, for the very credential and
			// version the person's approval covered.
			sec, err := g.vault.Credentials().SecretOf(cv.ID, cv.Version)
			if err != nil {
				if errors.Is(err, vault.ErrLocked) {
					return nil, nil, refusedStateChanged
				}
				return nil, nil, &refusal{agentapi.CodeUnavailable, audit.ReasonCredentialChanged,
					"the credential changed or became unavailable while this call waited; nothing was sent"}
			}
			once := &onceSecret{s: sec}
			src := epochSecret{v: g.vault, epoch: sess.VaultEpoch, src: once}
			return &action.Credential{Injection: actionInjection(cv.Injection), Secret: src}, func(int) { once.wipe() }, nil
		},
	}, sess, act)
}

// outgoing is what send sends: an http.request with a vault credential,
// a named operation with an OAuth lease, or another channel's action
// (perf: an SSH command).
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
	// perf performs an action of another channel than HTTP; nil sends req
	// with credential.
	perf performer
	// ssh are the facts of an SSH command, for its intent's audit entry.
	ssh *audit.SSHFacts
	// approvedVia is how the person's per-call approval of this call
	// reached Yett, for its intent entry; nil when no per-call card asked.
	approvedVia *audit.Via
}

// performer is what performs call: its own, or its HTTP request.
func (o *outgoing) performer() performer {
	if o.perf != nil {
		return o.perf
	}
	return &httpAction{call: o}
}

// digest names the request an idempotency key stands for: the operation,
// method, URL, query parameters, headers and body, each length-prefixed so
// no two requests share a digest by shifting bytes from one part to
// another. A key reused with another digest is refused.
func (o *outgoing) digest() string { return httpDigest(o.operation, o.req) }

// httpDigest is the digest of an HTTP request of operation ("" for
// http.request), as the journal keeps it (outgoing.digest).
func httpDigest(operation string, req action.Request) string {
	parts := []string{operation, req.Method, req.URL}
	for _, m := range []map[string]string{req.Params, req.Headers} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts = append(parts, strings.Join(keys, "\x00"))
		for _, k := range keys {
			parts = append(parts, m[k])
		}
	}
	return requestDigest(append(parts, string(req.Body))...)
}

// requestDigest is the SHA-256 of parts, each prefixed with its length
// (8 bytes, little-endian) so no two requests share a digest by shifting
// bytes from one part to another.
func requestDigest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		for i, l := 0, uint64(len(p)); i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// send runs the steps from the last checks to the answer: the vault epoch,
// boot and live process checked again right before anything is recorded
// (after any wait on a card); one durable step (the journal's dispatch
// record and the audit log's intent entry, written at the same time, each
// group-committed with other calls'); the credential read once; the
// request; the outcome recorded (durable with the next group commit, not
// waited for: see outcome); the answer.
func (g *Gateway) send(ctx context.Context, c *conn, call *outgoing, sess approval.Session, act *audit.Action) *mcp.CallToolResult {
	id := ids.New("q-")
	key := call.key
	if key == "" {
		key = ids.New("yk-")
	}
	act.RequestID, act.IdempotencyRef = id, key
	// 6. Checks right before the call is recorded. Nothing is durable yet,
	// so a refusal here leaves nothing behind but its audit entry.
	if g.vault.Epoch() != sess.VaultEpoch || sess.BootID != g.bootID || g.broker.BootID() != g.bootID {
		return g.refuse(c, act, sess.ID, refusedStateChanged)
	}
	if r := c.sessionStillServed(ctx, sess, act); r != nil {
		return g.refuse(c, act, sess.ID, r)
	}
	p := call.performer()
	// The dispatch belongs to the vault epoch it was approved in: a lock
	// cancels it and cuts its connection.
	dctx, done := g.dispatchContext(sess.VaultEpoch)
	defer done()
	if dctx.Err() != nil {
		return g.refuse(c, act, sess.ID, refusedStateChanged)
	}
	if g.hookBeforeIntent != nil {
		g.hookBeforeIntent(ctx, key)
	}
	// 7. One durable step before a byte leaves. The journal marks the call
	// dispatched (after a crash it answers STATUS_UNKNOWN, never RETRY_SAFE)
	// and the audit log holds its intent (fail closed). The journal's
	// record is queued first; the audit log's, carried by the journal's
	// log, waits for one group commit that covers both; the request leaves
	// only if both are durable.
	in := journal.Intent{
		ID: id, Scope: sess.Run.ExeHash(), Key: key, BootID: g.bootID, RunID: sess.RunID,
		Target: call.host, Path: call.path, CredentialRef: call.credRef,
	}
	p.describe(&in)
	var j struct {
		prev *journal.Entry
		err  error
	}
	var durable func() error
	j.prev, durable, j.err = g.journal.DispatchQueued(ctx, in)
	_, aerr := g.audit.Append(ctx, audit.Event{
		Type: audit.EventActionRequested, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: sess.VaultEpoch,
		SessionID: sess.ID, Run: runBinding(sess.RunID, sess.Run), Action: act, SSH: call.ssh, Via: call.approvedVia,
	})
	if durable != nil {
		j.err = durable()
	}
	switch {
	case errors.Is(j.err, journal.ErrKeyReused):
		return g.refuse(c, act, sess.ID, refusedKeyReused)
	case errors.Is(j.err, journal.ErrKeyInUse):
		return keyInUseAnswer(g, act, g.denied(c, act, sess.ID, audit.ReasonKeyInUse), j.prev)
	case j.err != nil && ctx.Err() != nil:
		return g.refuse(c, act, sess.ID, refusedCancelled)
	case j.err != nil:
		return g.refuse(c, act, sess.ID, refusedJournal)
	case aerr != nil:
		// Recorded as dispatched, and not sent: say so durably, so that
		// yett.status answers RETRY_SAFE.
		r := refusedAudit
		if ctx.Err() != nil {
			r = refusedCancelled
		} else {
			g.log.Error("audit log refused an action intent; denying", "run", sess.RunID)
		}
		g.journal.NotSent(context.WithoutCancel(ctx), id, string(r.reason))
		return g.refuse(c, act, sess.ID, r)
	}
	if g.hookAfterIntent != nil {
		g.hookAfterIntent(key)
	}
	d := &dispatchedCall{g: g, c: c, ctx: ctx, sess: sess, act: act, id: id, key: key, entry: -1}
	// 8. The credential, taken only now: for an action that was approved
	// and whose intent is durable (seed 002: a token is renewed only to
	// complete an approved action, so every refresh in the audit log
	// follows the intent that needed it, and a call the journal refuses
	// never reaches the token endpoint). A refusal here is recorded as not
	// sent: yett.status then answers RETRY_SAFE.
	if ref := p.lend(ctx); ref != nil {
		return d.notSent(ref)
	}
	defer p.release()
	// 9. Perform, and 10. the outcome recorded, then the answer. The agent
	// going away no longer cancels the action: from here its outcome is
	// recorded, not abandoned. A vault lock does cancel it.
	return p.perform(dctx, d)
}

func isPreSend(err error) bool {
	for _, e := range preSend {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// dispatchContext returns the context a dispatch approved in epoch runs
// under: cancelled at once when the vault has left that epoch already, and
// the moment it leaves it (onVaultEvent).
func (g *Gateway) dispatchContext(epoch uint64) (context.Context, context.CancelFunc) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.epochCtx == nil || g.epochOf != epoch {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	return context.WithCancel(g.epochCtx)
}

// credentialRefusal answers a call whose host and path have no usable
// credential.
func credentialRefusal(err error) *refusal {
	switch {
	case errors.Is(err, vault.ErrLocked):
		return refusedLocked
	case errors.Is(err, vault.ErrNoCredential):
		return &refusal{agentapi.CodeNoCredential, audit.ReasonPolicy, "no credential in Yett is bound to this host and path; the person can add one in Yett"}
	case errors.Is(err, vault.ErrAmbiguousCredential):
		return &refusal{agentapi.CodeAmbiguous, audit.ReasonPolicy, "two credentials are bound equally to this host and path; the person must narrow one in Yett"}
	case errors.Is(err, vault.ErrInvalid):
		return &refusal{agentapi.CodeInvalid, audit.ReasonInvalidRequest, "url: the host or port is not valid"}
	}
	return &refusal{agentapi.CodeUnavailable, audit.ReasonPolicy, "the credential for this host could not be read"}
}

func publicArgError(err error) string {
	var ae *errArgs
	if errors.As(err, &ae) {
		return ae.msg
	}
	return "invalid arguments"
}
