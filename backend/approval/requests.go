package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/ids"
	"github.com/yettdev/yett/backend/procid"
)

// Ticket is a handle on one session card; Wait works even after the card
// was answered or withdrawn.
type Ticket struct {
	ID string
	// New says this call raised the card (it was not already pending).
	New bool
	p   *pending
}

// Wait waits for the card to be answered. The card outlives ctx: it belongs
// to the run, not to the call that waited.
func (t Ticket) Wait(ctx context.Context) (Session, error) {
	select {
	case <-t.p.done:
		return t.p.session, t.p.err
	case <-ctx.Done():
		return Session{}, ctx.Err()
	}
}

// Deadline is when the card expires unanswered.
func (t Ticket) Deadline() time.Time { return t.p.req.Deadline }

// RequestSession shows a session card for run, or joins the one already
// pending for it. The card is bound to the vault epoch of this moment, and
// says what changed (why).
func (b *Broker) RequestSession(run *procid.RunRecord, why Continuity, channel, target string) (Ticket, error) {
	return b.RequestSessionFor(run, why, Call{Channel: channel, Target: target})
}

// RequestSessionFor is RequestSession for a card that names its first call
// in full: an SSH command's session card names the command.
func (b *Broker) RequestSessionFor(run *procid.RunRecord, why Continuity, first Call) (Ticket, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return Ticket{}, ErrClosed
	}
	if _, gone := b.endedRuns[RunID(run)]; gone {
		b.mu.Unlock()
		return Ticket{}, ErrWithdrawn
	}
	for id, p := range b.pending {
		if p.req.Kind == KindSession && p.req.RunID == RunID(run) {
			b.mu.Unlock()
			return Ticket{ID: id, p: p}, nil
		}
	}
	now := time.Now()
	p := &pending{
		req: Request{
			ID: ids.New("rq-"), Kind: KindSession, RunID: RunID(run), Who: RequesterOf(run),
			Change: why.Change, ChangeDetail: why.Detail, Channel: first.Channel, Target: first.Target, CreatedAt: now, Deadline: now.Add(b.cfg.Timeout),
			Credential: first.Credential, Operation: first.Operation, Description: first.Description,
		},
		run: run, epoch: b.cfg.Epoch(), done: make(chan struct{}),
	}
	first.command(&p.req)
	b.addLocked(p)
	b.mu.Unlock()
	b.notify(Update{Pending: true})
	return Ticket{ID: p.req.ID, New: true, p: p}, nil
}

// Call is what a per-call card asks about: one call's method and target,
// and the credential or operation it would use.
type Call struct {
	Channel string // "http", or the operation channel
	Method  string
	Target  string // host and path ("name host/path" for an operation)
	// Credential names the credential or authorization (never its value).
	Credential string
	// Ref is the stable id of what the call would use: the credential's id,
	// or "operation:<name>". A notification policy names these.
	Ref string
	// Operation and Description name a named operation and say what it
	// does (the sentence its editor promises the card shows).
	Operation   string
	Description string
	// Command and Stdin are an SSH command's, shown on the card: the
	// command exactly, its input up to MaxStdinShown bytes and its size.
	Command string
	Stdin   []byte
	// Tool and Arguments are an upstream MCP server's tool call, shown on
	// the card: the tool as agents call it ("github.create_issue") and
	// its arguments exactly as they are sent (JSON), the card carrying
	// the start of them (MaxArgumentsShown bytes, indented) and their size.
	Tool      string
	Arguments []byte
	// Join names the call across retries ("" for none): its idempotency
	// key and a digest of what it would send. A call of the same run with
	// the same Join waits on the card already asked for it instead of
	// raising a second; a card whose caller stopped waiting (its client's
	// time limit) stays until it is answered or expires, and the retry
	// takes its answer. Without a Join, a caller that stops waiting
	// withdraws its card.
	Join string
}

// MaxStdinShown bounds how much of a command's standard input a card
// carries.
const MaxStdinShown = 2048

// MaxArgumentsShown bounds how much of a tool call's arguments a card
// carries.
const MaxArgumentsShown = 4096

// command copies an SSH command and its input, or an upstream tool call
// and its arguments, onto a card.
func (c Call) command(r *Request) {
	if c.Tool != "" {
		r.Tool, r.ArgumentsBytes = c.Tool, len(c.Arguments)
		shown := c.Arguments
		var pretty bytes.Buffer
		if json.Indent(&pretty, c.Arguments, "", "  ") == nil {
			shown = pretty.Bytes()
		}
		if len(shown) > MaxArgumentsShown {
			shown = shown[:MaxArgumentsShown]
		}
		r.Arguments = strings.ToValidUTF8(string(shown), "\uFFFD")
	}
	r.Command, r.StdinBytes = c.Command, len(c.Stdin)
	in := c.Stdin
	if len(in) > MaxStdinShown {
		in = in[:MaxStdinShown]
	}
	r.Stdin = strings.ToValidUTF8(string(in), "\uFFFD")
}

// AskCall asks the person about one call of a run that has a valid session,
// and returns how the approval reached Yett (for the call's intent entry).
// The card is removed when ctx ends: a per-call card without its call must
// not stay answerable.
func (b *Broker) AskCall(ctx context.Context, run *procid.RunRecord, sessionID string, c Call) (Via, error) {
	t, err := b.RequestCall(run, sessionID, c)
	if err != nil {
		return Via{}, err
	}
	return t.Wait(ctx)
}

// CallTicket is a handle on one per-call card, for the one call that
// waits on it.
type CallTicket struct {
	b *Broker
	p *pending
}

// Deadline is when the card expires unanswered (a joined card's is the
// one it was raised with).
func (t CallTicket) Deadline() time.Time { return t.p.req.Deadline }

// Withdraw takes the card away unanswered (its request could not be
// recorded): every call waiting on it gets ErrWithdrawn.
func (t CallTicket) Withdraw() {
	b := t.b
	b.mu.Lock()
	removed := b.finishLocked(t.p, ErrWithdrawn)
	if removed {
		b.withdrawnLocked(t.p, audit.ReasonAuditUnavailable)
	}
	if b.joinable[t.p.join] == t.p {
		delete(b.joinable, t.p.join)
	}
	b.mu.Unlock()
	if removed {
		b.notify(Update{Pending: true})
	}
}

// Wait waits for the answer; a caller that stops waiting (ctx) leaves the
// card as Call.Join says.
func (t CallTicket) Wait(ctx context.Context) (Via, error) { return t.b.waitCall(ctx, t.p) }

// RequestCall is AskCall's first half: it shows the card, or joins the one
// a call of the same Join asked for (answered meanwhile, its Wait returns
// that answer at once). The caller must Wait on the ticket.
func (b *Broker) RequestCall(run *procid.RunRecord, sessionID string, c Call) (CallTicket, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return CallTicket{}, ErrClosed
	}
	// A grant the person gave for calls like this one lets it through
	// without a card; the call's intent names the grant (its via).
	if g := b.grantForLocked(RunID(run), sessionID, c, time.Now()); g != nil {
		p := &pending{done: make(chan struct{}), via: b.useGrantLocked(g)}
		close(p.done)
		b.mu.Unlock()
		b.notify(Update{Sessions: true})
		return CallTicket{b, p}, nil
	}
	key := ""
	if c.Join != "" {
		key = RunID(run) + "\x00" + c.Join
	}
	p := b.joinable[key]
	if p != nil && (p.epoch != b.cfg.Epoch() || p.req.SessionID != sessionID) {
		delete(b.joinable, key) // asked in another vault epoch or session: over
		p = nil
	}
	if p != nil {
		return b.joinLocked(p), nil
	}
	now := time.Now()
	p = &pending{
		req: Request{
			ID: ids.New("rq-"), Kind: KindCall, RunID: RunID(run), Who: RequesterOf(run), Channel: c.Channel,
			Method: c.Method, Target: c.Target, Credential: c.Credential, Ref: c.Ref, SessionID: sessionID,
			Operation: c.Operation, Description: c.Description,
			CreatedAt: now, Deadline: now.Add(b.cfg.Timeout),
		},
		run: run, epoch: b.cfg.Epoch(), done: make(chan struct{}), join: key, waiters: 1,
	}
	p.grantScope, p.req.GrantWords = GrantScopeOf(c)
	c.command(&p.req)
	b.addLocked(p)
	if key != "" {
		b.joinable[key] = p
	}
	b.mu.Unlock()
	b.notify(Update{Pending: true})
	return CallTicket{b, p}, nil
}

// joinLocked is one more call waiting on card p (pending, or answered
// while nobody waited); the card no longer says its agent stopped waiting.
// b.mu held; returns with it released.
func (b *Broker) joinLocked(p *pending) CallTicket {
	p.waiters++
	changed := p.req.AgentStoppedWaiting
	p.req.AgentStoppedWaiting = false
	b.mu.Unlock()
	if changed {
		b.notify(Update{Pending: true})
	}
	return CallTicket{b, p}
}

// waitCall waits on per-call card p. A caller that stops waiting leaves
// the card to the others waiting on it; the last one withdraws it, unless
// the card can be joined (p.join), which then stays for the retry. An
// answer, given before or while it waits, is taken once.
func (b *Broker) waitCall(ctx context.Context, p *pending) (Via, error) {
	select {
	case <-p.done:
		b.mu.Lock()
		if b.joinable[p.join] == p {
			delete(b.joinable, p.join) // its waiters took the answer
		}
		b.mu.Unlock()
		return p.via, p.err
	case <-ctx.Done():
		b.mu.Lock()
		p.waiters--
		if p.waiters > 0 || b.pending[p.req.ID] != p {
			b.mu.Unlock()
			return Via{}, ctx.Err()
		}
		if p.join != "" {
			p.req.AgentStoppedWaiting = true
			b.mu.Unlock()
			b.notify(Update{Pending: true})
			return Via{}, ctx.Err()
		}
		removed := b.finishLocked(p, ctx.Err())
		if removed {
			b.withdrawnLocked(p, audit.ReasonCancelled)
		}
		b.mu.Unlock()
		if removed {
			b.notify(Update{Pending: true})
		}
		return Via{}, ctx.Err()
	}
}

func (b *Broker) addLocked(p *pending) {
	b.pending[p.req.ID] = p
	id := p.req.ID
	p.timer = time.AfterFunc(b.cfg.Timeout, func() { b.expire(id) })
}

// finishLocked removes p (if still pending) and wakes its waiters with err.
func (b *Broker) finishLocked(p *pending, err error) bool {
	if b.pending[p.req.ID] != p {
		return false
	}
	delete(b.pending, p.req.ID)
	p.timer.Stop()
	p.err = err
	close(p.done)
	// An answer is kept for a retry only when nobody waited for it; a card
	// that expired or was withdrawn is not an answer to keep.
	if b.joinable[p.join] == p && (p.waiters > 0 || err != nil && err != ErrDenied) {
		delete(b.joinable, p.join)
	}
	return true
}

func (b *Broker) expire(id string) {
	b.mu.Lock()
	p, ok := b.pending[id]
	if ok {
		b.finishLocked(p, ErrTimeout)
		b.decideLocked(p, OutcomeExpired, "")
	}
	b.mu.Unlock()
	if ok {
		if r := b.cfg.Recorder; r != nil {
			r.RequestExpired(p.req)
		}
		b.notify(Update{Pending: true})
	}
}

// Answer records the person's decision on a pending request. surface names
// where it was made (SurfaceApp, SurfaceTerminal, SurfaceNotification).
// The first answer wins: a later one gets ErrNotPending. An answer the
// AnswerPolicy refuses gets its error (ErrWindowOnly) and the card stays
// pending. Approving a card (session or per call) is refused with
// ErrWithdrawn if the vault epoch moved since the card was shown, and a
// session card with ErrAuditUnavailable if the approval could not be
// recorded; in each case the waiting calls are denied.
func (b *Broker) Answer(id string, approve bool, surface string) error {
	return b.AnswerVia(id, approve, Via{Surface: surface})
}

// AnswerVia is Answer with what the surface checked about the answer (the
// terminal's one-time code, the notification server, a system
// verification): the session, or the approved call's intent, records it.
func (b *Broker) AnswerVia(id string, approve bool, via Via) error {
	return b.answer(id, approve, via, false)
}

// AnswerGrant approves per-call card id and gives its run a grant for
// calls like it (Request.GrantWords says which) for GrantDuration, within
// its session: "Approve calls like this for 10 minutes". The grant is
// recorded (grant_given) before it takes effect; if that fails the card is
// denied. ErrNotGrantable for a card that cannot give one.
func (b *Broker) AnswerGrant(id string, via Via) error {
	return b.answer(id, true, via, true)
}

func (b *Broker) answer(id string, approve bool, via Via, grant bool) error {
	surface := via.Surface
	b.mu.Lock()
	p, ok := b.pending[id]
	if !ok {
		b.mu.Unlock()
		return ErrNotPending
	}
	if b.policy != nil {
		if err := b.policy(p.req, surface); err != nil {
			b.mu.Unlock()
			return err
		}
	}
	if !approve {
		if p.req.Kind == KindAccess {
			b.refusedAccess[accessKey(p.req.RunID, p.req.Channel, p.req.Target)] = p.req.Reason
		}
		b.finishLocked(p, ErrDenied)
		b.decideLocked(p, OutcomeDenied, surface)
		b.mu.Unlock()
		b.notify(Update{Pending: true})
		return nil
	}
	if v := b.verifier; v != nil && p.req.Kind != KindAccess && via.Verified == "" && v.Required(p.req, via) {
		proof, err := b.verifyLocked(p, v) // unlocks and locks b.mu
		if err != nil {
			b.mu.Unlock()
			return err
		}
		via.Verified = proof
	}
	if p.epoch != b.cfg.Epoch() {
		b.finishLocked(p, ErrWithdrawn)
		b.decideLocked(p, OutcomeRefused, surface)
		b.mu.Unlock()
		b.notify(Update{Pending: true})
		return ErrWithdrawn
	}
	if grant {
		return b.grantLocked(p, via) // unlocks b.mu
	}
	if p.req.Kind == KindCall || p.req.Kind == KindAccess {
		// A per-call card is approved only in the epoch it was shown in,
		// as a session card is: the person answered a question about the
		// vault state of that moment.
		p.via = via
		b.finishLocked(p, nil)
		b.decideLocked(p, OutcomeApproved, surface)
		b.mu.Unlock()
		b.notify(Update{Pending: true})
		return nil
	}
	// Take the card off the list while the approval is recorded, so a second
	// answer cannot race this one.
	delete(b.pending, id)
	p.timer.Stop()
	b.mu.Unlock()

	s := Session{
		ID: ids.New("ap-"), BootID: b.cfg.BootID, RunID: p.req.RunID, VaultEpoch: p.epoch,
		ApprovedAt: time.Now().UTC(), Surface: surface, Via: via, Channel: p.req.Channel, Who: p.req.Who, Run: p.run,
	}
	if r := b.cfg.Recorder; r != nil {
		if err := r.SessionApproved(context.Background(), s); err != nil {
			b.mu.Lock()
			b.decideLocked(p, OutcomeRefused, surface)
			b.mu.Unlock()
			b.wake(p, Session{}, ErrAuditUnavailable)
			return ErrAuditUnavailable
		}
	}
	b.mu.Lock()
	_, runGone := b.endedRuns[s.RunID]
	if runGone || p.epoch != b.cfg.Epoch() || b.closed {
		b.decideLocked(p, OutcomeRefused, surface)
		b.mu.Unlock()
		reason := audit.ReasonVaultStateChanged
		if runGone {
			reason = audit.ReasonProcessExited
		}
		if r := b.cfg.Recorder; r != nil {
			r.SessionEnded(s, reason)
		}
		b.wake(p, Session{}, ErrWithdrawn)
		return ErrWithdrawn
	}
	b.sessions[s.RunID] = &s
	b.decideLocked(p, OutcomeApproved, surface)
	b.mu.Unlock()
	b.wake(p, s, nil)
	return nil
}

// verifyLocked asks the person's verification for p, without the broker's
// lock while it waits, and returns with it held again. The card stays
// pending meanwhile (its timer runs, it can be withdrawn, denied in the
// window or at a terminal); the verification is for this card only and
// ends with it. b.mu held.
func (b *Broker) verifyLocked(p *pending, v Verifier) (string, error) {
	if p.verifying {
		return "", ErrVerifying
	}
	p.verifying = true
	req := p.req
	b.mu.Unlock()
	ctx, cancel := context.WithDeadline(context.Background(), req.Deadline)
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	proof, err := v.Verify(ctx, req)
	cancel()
	b.mu.Lock()
	p.verifying = false
	if b.pending[req.ID] != p {
		return "", ErrNotPending
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotVerified, err)
	}
	return proof, nil
}

func (b *Broker) wake(p *pending, s Session, err error) {
	p.session, p.err = s, err
	close(p.done)
	b.notify(Update{Pending: true, Sessions: err == nil})
}

// EndRun ends run's session (if any) and withdraws its pending cards: the
// process exited, its connection closed, or its identity stopped matching.
func (b *Broker) EndRun(runID string, reason audit.Reason) {
	b.mu.Lock()
	b.endedRuns[runID] = reason
	var ended *Session
	if s, ok := b.sessions[runID]; ok {
		ended = b.endLocked(s, reason)
	}
	withdrew := false
	for _, p := range b.pending {
		if p.req.RunID == runID && b.finishLocked(p, ErrWithdrawn) {
			b.withdrawnLocked(p, reason)
			withdrew = true
		}
	}
	for k, p := range b.joinable {
		if p.req.RunID == runID {
			delete(b.joinable, k) // an answer kept for a retry ends with its run
		}
	}
	for k := range b.refusedAccess {
		if strings.HasPrefix(k, runID+"\x00") {
			delete(b.refusedAccess, k)
		}
	}
	b.mu.Unlock()
	b.afterEnd(ended, reason)
	if withdrew {
		b.notify(Update{Pending: true})
	}
}

// EpochChanged ends every session and withdraws every card bound to another
// vault epoch than the current one. The gateway calls it on every vault event.
func (b *Broker) EpochChanged() {
	b.mu.Lock()
	e := b.cfg.Epoch()
	var ended []*Session
	for _, s := range b.sessions {
		if s.VaultEpoch != e {
			ended = append(ended, b.endLocked(s, audit.ReasonVaultStateChanged))
		}
	}
	withdrew := false
	for _, p := range b.pending {
		if p.epoch != e && b.finishLocked(p, ErrWithdrawn) {
			b.withdrawnLocked(p, audit.ReasonVaultStateChanged)
			withdrew = true
		}
	}
	b.mu.Unlock()
	for _, s := range ended {
		b.afterEnd(s, audit.ReasonVaultStateChanged)
	}
	if withdrew {
		b.notify(Update{Pending: true})
	}
}

// Revoke ends a session at the person's request.
func (b *Broker) Revoke(sessionID string) error {
	b.mu.Lock()
	var found *Session
	for _, s := range b.sessions {
		if s.ID == sessionID {
			found = b.endLocked(s, audit.ReasonRevoked)
			break
		}
	}
	b.mu.Unlock()
	if found == nil {
		return ErrNoSession
	}
	b.afterEnd(found, audit.ReasonRevoked)
	return nil
}

// Close withdraws every card and ends every session (the gateway stops).
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	var ended []*Session
	for _, s := range b.sessions {
		ended = append(ended, b.endLocked(s, ReasonGatewayStopped))
	}
	for _, p := range b.pending {
		if b.finishLocked(p, ErrClosed) {
			b.withdrawnLocked(p, ReasonGatewayStopped)
		}
	}
	b.mu.Unlock()
	for _, s := range ended {
		b.afterEnd(s, ReasonGatewayStopped)
	}
	b.notify(Update{Pending: true, Sessions: true})
}

func (b *Broker) endLocked(s *Session, reason audit.Reason) *Session {
	delete(b.sessions, s.RunID)
	b.history = append(b.history, endedRun{pid: s.Run.PID, startKey: s.Run.StartKey, exe: s.Run.ExeHash(),
		exePath: s.Run.ExePath, cmdLine: s.Run.CmdLine, reason: reason, at: time.Now()})
	if len(b.history) > maxHistory {
		b.history = b.history[len(b.history)-maxHistory:]
	}
	return s
}

func (b *Broker) afterEnd(s *Session, reason audit.Reason) {
	if s == nil {
		return
	}
	b.mu.Lock()
	gs := b.endSessionGrantsLocked(s.ID)
	b.mu.Unlock()
	b.afterGrantEnd(gs, reason)
	if r := b.cfg.Recorder; r != nil {
		r.SessionEnded(*s, reason)
	}
	b.notify(Update{Sessions: true})
}
