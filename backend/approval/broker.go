package approval

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/feed"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/procid"
)

// Reasons a session ends besides audit's own: the run's connection closed
// while the process lives on, and the gateway stopped.
const (
	ReasonConnectionClosed audit.Reason = "connection_closed"
	ReasonGatewayStopped   audit.Reason = "gateway_stopped"
)

// Recorder writes the broker's authority changes durably (the gateway's
// audit log and journal). SessionApproved runs before a session takes effect:
// if it fails, the approval is refused (fail closed).
type Recorder interface {
	SessionApproved(ctx context.Context, s Session) error
	SessionEnded(s Session, reason audit.Reason)
	RequestExpired(r Request)
}

// Config configures a Broker.
type Config struct {
	// BootID is this gateway start's random id.
	BootID string
	// Timeout bounds how long a request waits; 0 means DefaultTimeout.
	Timeout time.Duration
	// Epoch returns the vault's current epoch.
	Epoch func() uint64
	// Recorder may be nil (tests of the broker alone).
	Recorder Recorder
}

type pending struct {
	req     Request
	run     *procid.RunRecord
	epoch   uint64
	done    chan struct{}
	session Session
	err     error
	timer   *time.Timer
	// via is how an approved per-call card's answer came (set before done
	// is closed).
	via Via
	// verifying: an approval of this card waits for the person's
	// verification; another answer to approve it is refused meanwhile.
	verifying bool
	// join names the call a per-call card is about across retries
	// (Call.Join, "" for none), and waiters counts the calls waiting on it.
	join    string
	waiters int
	// grantScope is what a grant from this card would cover ("" for none:
	// GrantScopeOf).
	grantScope string
}

type endedRun struct {
	pid      int
	startKey uint64
	exe      string
	// exePath and cmdLine are what the run was inspected running, for the
	// card of the same process after it changed (ChangeFor).
	exePath string
	cmdLine string
	reason  audit.Reason
	at      time.Time
}

// maxHistory bounds the remembered ended sessions of this boot.
const maxHistory = 512

// maxDecisions bounds the recent decisions kept for the person to review.
const maxDecisions = 50

// AnswerPolicy says whether an answer from surface may decide r: nil lets
// it, an error (ErrWindowOnly) refuses it and leaves the card pending.
type AnswerPolicy func(r Request, surface string) error

// Verifier confirms that the person is there before an approval takes
// effect (backend/presence asks the OS). The composition root sets it
// (SetVerifier) with the person's choice of when it is required.
type Verifier interface {
	// Required says whether approving r, as the answer came (via), needs
	// a verification first.
	Required(r Request, via Via) bool
	// Verify asks the OS to verify the person about r, and returns what
	// verified them ("polkit: the password of ana"). It may take as long
	// as the person does; ctx ends with the card.
	Verify(ctx context.Context, r Request) (string, error)
}

// Broker holds pending requests and live sessions. Safe for concurrent use.
type Broker struct {
	cfg Config

	mu      sync.Mutex
	pending map[string]*pending
	// joinable are the per-call cards a retry of the same call may join, by
	// run and Call.Join: pending ones, and answered ones whose caller had
	// stopped waiting, kept until the retry takes the answer.
	joinable map[string]*pending
	sessions map[string]*Session // by run id
	grants   map[string]*Grant   // live grants by id
	// refusedAccess are the access requests the person refused, by run,
	// kind and target, with the reason the agent gave: the same run asks
	// again only with a new reason.
	refusedAccess map[string]string
	endedRuns     map[string]audit.Reason
	history       []endedRun
	decisions     []Decision // newest last, at most maxDecisions
	policy        AnswerPolicy
	verifier      Verifier
	closed        bool

	updates feed.Feed[Update]
}

// New returns an empty broker.
func New(cfg Config) *Broker {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Broker{
		cfg: cfg, pending: map[string]*pending{}, joinable: map[string]*pending{}, sessions: map[string]*Session{}, grants: map[string]*Grant{}, refusedAccess: map[string]string{},
		endedRuns: map[string]audit.Reason{},
	}
}

// BootID returns the boot id sessions are bound to.
func (b *Broker) BootID() string { return b.cfg.BootID }

// Subscribe registers fn for every later change, delivered as backend/feed
// says: in order, one at a time, never under the broker's lock (fn may call
// any Broker method). fn should not block for long: later updates wait.
func (b *Broker) Subscribe(fn func(Update)) (cancel func()) { return b.updates.Subscribe(fn) }

func (b *Broker) notify(u Update) { b.updates.Publish(u) }

// Pending lists the pending requests, oldest first.
func (b *Broker) Pending() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Request, 0, len(b.pending))
	for _, p := range b.pending {
		out = append(out, p.req)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// SetVerifier makes every later approval that v requires wait for the
// person's verification (nil: none is asked).
func (b *Broker) SetVerifier(v Verifier) {
	b.mu.Lock()
	b.verifier = v
	b.mu.Unlock()
}

// VerificationRequired says whether approving r as via describes would
// wait for the person's system verification (for the card to say so).
func (b *Broker) VerificationRequired(r Request, via Via) bool {
	b.mu.Lock()
	v := b.verifier
	b.mu.Unlock()
	return v != nil && v.Required(r, via)
}

// SetAnswerPolicy makes every later Answer pass p first. The composition
// root sets it before any surface it governs (notifications) is attached.
func (b *Broker) SetAnswerPolicy(p AnswerPolicy) {
	b.mu.Lock()
	b.policy = p
	b.mu.Unlock()
}

// Decisions lists the recent answers and expiries of this boot, newest
// first.
func (b *Broker) Decisions() []Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Decision, len(b.decisions))
	for i, d := range b.decisions {
		out[len(out)-1-i] = d
	}
	return out
}

// decideLocked remembers how p's card ended. b.mu held.
func (b *Broker) decideLocked(p *pending, o Outcome, surface string) {
	d := Decision{
		RequestID: p.req.ID, Kind: p.req.Kind, Who: p.req.Who, Change: p.req.Change, Channel: p.req.Channel,
		Method: p.req.Method, Target: p.req.Target, Credential: p.req.Credential, Outcome: o, Surface: surface,
		At: time.Now().UTC(),
	}
	if surface != "" {
		d.By = localUser()
	}
	b.decisions = append(b.decisions, d)
	if len(b.decisions) > maxDecisions {
		b.decisions = b.decisions[len(b.decisions)-maxDecisions:]
	}
}

// withdrawnLocked remembers that p's card went away unanswered, and why.
// b.mu held.
func (b *Broker) withdrawnLocked(p *pending, reason audit.Reason) {
	b.decideLocked(p, OutcomeWithdrawn, "")
	b.decisions[len(b.decisions)-1].Reason = string(reason)
}

// Sessions lists the live sessions, oldest first.
func (b *Broker) Sessions() []Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ApprovedAt.Before(out[j].ApprovedAt) })
	return out
}

// Valid returns the session approving run, if one is valid now: same boot,
// same vault epoch, same launch nonce, same process. A session found stale
// here is ended on the spot.
func (b *Broker) Valid(run *procid.RunRecord) (Session, bool) {
	b.mu.Lock()
	s, ok := b.sessions[RunID(run)]
	if !ok {
		b.mu.Unlock()
		return Session{}, false
	}
	if s.Run.LaunchNonce != run.LaunchNonce || s.Run.PID != run.PID || s.Run.StartKey != run.StartKey {
		// Another run under the same id cannot happen with random nonces;
		// refuse without touching the session that owns the id.
		b.mu.Unlock()
		return Session{}, false
	}
	if s.BootID == b.cfg.BootID && s.VaultEpoch == b.cfg.Epoch() {
		out := *s
		b.mu.Unlock()
		return out, true
	}
	reason := audit.ReasonVaultStateChanged
	if s.BootID != b.cfg.BootID {
		reason = audit.ReasonGatewayRestarted
	}
	ended := b.endLocked(s, reason)
	b.mu.Unlock()
	b.afterEnd(ended, reason)
	return Session{}, false
}
