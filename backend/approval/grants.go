package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/ids"
)

// GrantDuration is how long "Approve calls like this for 10 minutes"
// lasts: a grant ends then, or earlier with its session (the process
// exits, the vault locks, Yett restarts, the person revokes the session)
// or when the person revokes it.
const GrantDuration = 10 * time.Minute

// SurfaceGrant is the via surface of a call a grant let through, in its
// intent entry: the grant, and the answer that gave it, are named there.
const SurfaceGrant = "grant"

// ErrNoGrant: RevokeGrant named no live grant.
var ErrNoGrant = errors.New("approval: no such grant")

// ErrNotGrantable: the card is not one a grant can come from (a session
// card, or a call whose scope a grant cannot name).
var ErrNotGrantable = errors.New("approval: this card cannot give calls like it for a while")

// Grant lets calls like one approved per-call card through without a card
// of their own, for one run's session and a few minutes: the same
// credential or operation (Ref), the same channel and HTTP method, and the
// same scope (GrantScopeOf). It never outlives its session.
type Grant struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	Who       Requester
	Channel   string `json:"channel"`
	Method    string `json:"method,omitempty"`
	// Scope is what the calls must match: host and path prefix (HTTP), the
	// operation and its host and path prefix, or host and exact command
	// (SSH). Words says it for a person.
	Scope      string    `json:"scope"`
	Words      string    `json:"words"`
	Credential string    `json:"credential,omitempty"`
	Ref        string    `json:"ref"`
	GivenAt    time.Time `json:"given_at"`
	Until      time.Time `json:"until"`
	// Uses counts the calls it let through.
	Uses int `json:"uses"`
	// Via is how the answer that gave it reached Yett.
	Via Via `json:"-"`

	timer *time.Timer
}

// Facts are g as the audit log records it.
func (g *Grant) Facts() *audit.GrantFacts {
	return &audit.GrantFacts{ID: g.ID, Channel: g.Channel, Method: g.Method, Scope: g.Scope, Name: g.Credential,
		Ref: g.Ref, Until: g.Until, Uses: g.Uses}
}

// GrantRecorder is the part of a Recorder that writes grants durably.
// GrantGiven runs before the grant takes effect: if it fails, the card is
// refused (fail closed).
type GrantRecorder interface {
	GrantGiven(ctx context.Context, g Grant) error
	GrantEnded(g Grant, reason audit.Reason)
}

// GrantScopeOf is the scope a grant from card c would cover, and the
// words the card shows for it ("" when no grant can come from c). HTTP:
// the call's host and its path up to the last "/" (POST to
// api.example.com/repos/a/issues covers POST to api.example.com/repos/a/…);
// an operation: the operation's calls to that prefix; SSH: the host and
// exactly that command (no rule wider than the one command is granted).
func GrantScopeOf(c Call) (scope, words string) {
	switch {
	case c.Command != "":
		return c.Target + "\x00" + c.Command, fmt.Sprintf("exactly this command on %s", c.Target)
	case c.Tool != "":
		return toolScope(c), fmt.Sprintf("calls of %s with exactly these arguments", c.Tool)
	case c.Method == "" || c.Target == "":
		return "", ""
	}
	target := c.Target
	i := strings.IndexByte(target, '/')
	if i < 0 {
		return "", ""
	}
	prefix := target[:strings.LastIndexByte(target, '/')+1]
	if c.Operation != "" {
		return prefix, fmt.Sprintf("%s calls of %s under %s…", c.Method, c.Operation, strings.TrimPrefix(prefix, c.Operation+" "))
	}
	return prefix, fmt.Sprintf("%s requests to %s…", c.Method, prefix)
}

// toolScope is the scope of a grant of an upstream tool call: the tool
// and the digest of its exact arguments.
func toolScope(c Call) string {
	sum := sha256.Sum256(c.Arguments)
	return "tool " + c.Tool + " arguments-sha256:" + hex.EncodeToString(sum[:])
}

// inScope says whether call c is within a grant's scope. A path that
// could climb out of the prefix (a ".." segment, an escaped dot or slash)
// is never in it: that call gets its own card.
func inScope(scope string, c Call) bool {
	if c.Tool != "" {
		return scope == toolScope(c)
	}
	if c.Command != "" {
		return scope == c.Target+"\x00"+c.Command
	}
	if !strings.HasPrefix(c.Target, scope) {
		return false
	}
	rest := strings.ToLower(c.Target[len(scope):])
	return !strings.Contains("/"+rest, "/..") && !strings.Contains(rest, "%2e") && !strings.Contains(rest, "%2f") && !strings.Contains(rest, "\\")
}

// grantForLocked is the live grant that lets call c of run through, if
// any: its session must still be the run's. b.mu held.
func (b *Broker) grantForLocked(runID, sessionID string, c Call, now time.Time) *Grant {
	if s := b.sessions[runID]; s == nil || s.ID != sessionID {
		return nil
	}
	for _, g := range b.grants {
		if g.RunID == runID && g.SessionID == sessionID && g.Ref == c.Ref && g.Channel == c.Channel &&
			g.Method == c.Method && now.Before(g.Until) && inScope(g.Scope, c) {
			return g
		}
	}
	return nil
}

// useGrantLocked lets a call through on g: its via names the grant and the
// answer that gave it. b.mu held.
func (b *Broker) useGrantLocked(g *Grant) Via {
	g.Uses++
	return Via{
		Surface: SurfaceGrant,
		Detail: fmt.Sprintf("grant %s, given %s on the %s until %s (use %d)", g.ID, clock(g.GivenAt), g.Via.Surface,
			clock(g.Until), g.Uses),
		Verified: g.Via.Verified,
	}
}

// Grants are the live grants, oldest first.
func (b *Broker) Grants() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Grant, 0, len(b.grants))
	for _, g := range b.grants {
		c := *g
		c.timer = nil
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Grant) int { return a.GivenAt.Compare(b.GivenAt) })
	return out
}

// RevokeGrant ends a grant at the person's request; its session stays.
func (b *Broker) RevokeGrant(id string) error {
	b.mu.Lock()
	g, ok := b.grants[id]
	if ok {
		b.endGrantLocked(g)
	}
	b.mu.Unlock()
	if !ok {
		return ErrNoGrant
	}
	b.afterGrantEnd([]*Grant{g}, audit.ReasonRevoked)
	return nil
}

// endGrantLocked takes g off the live grants. b.mu held.
func (b *Broker) endGrantLocked(g *Grant) {
	delete(b.grants, g.ID)
	if g.timer != nil {
		g.timer.Stop()
	}
}

// endSessionGrantsLocked ends the grants of session id. b.mu held.
func (b *Broker) endSessionGrantsLocked(sessionID string) []*Grant {
	var out []*Grant
	for _, g := range b.grants {
		if g.SessionID == sessionID {
			b.endGrantLocked(g)
			out = append(out, g)
		}
	}
	return out
}

func (b *Broker) afterGrantEnd(gs []*Grant, reason audit.Reason) {
	if len(gs) == 0 {
		return
	}
	if r, ok := b.cfg.Recorder.(GrantRecorder); ok {
		for _, g := range gs {
			r.GrantEnded(*g, reason)
		}
	}
	b.notify(Update{Sessions: true})
}

// expireGrant ends grant id when its time is up.
func (b *Broker) expireGrant(id string) {
	b.mu.Lock()
	g, ok := b.grants[id]
	if ok {
		b.endGrantLocked(g)
	}
	b.mu.Unlock()
	if ok {
		b.afterGrantEnd([]*Grant{g}, audit.ReasonExpired)
	}
}

// newGrantLocked makes the grant approving card p for calls like it gives.
// b.mu held.
func (b *Broker) newGrantLocked(p *pending, via Via) (*Grant, error) {
	s, ok := b.sessions[p.req.RunID]
	if p.req.Kind != KindCall || p.grantScope == "" || !ok || s.ID != p.req.SessionID {
		return nil, ErrNotGrantable
	}
	now := time.Now().UTC()
	return &Grant{
		ID: ids.New("gr-"), SessionID: s.ID, RunID: p.req.RunID, Who: p.req.Who, Channel: p.req.Channel, Method: p.req.Method,
		Scope: p.grantScope, Words: p.req.GrantWords, Credential: p.req.Credential, Ref: p.req.Ref,
		GivenAt: now, Until: now.Add(GrantDuration), Via: via,
	}, nil
}

// grantLocked approves per-call card p and gives the grant. It records the
// grant without the broker's lock (the card stays pending meanwhile, and a
// second approval of it is refused), then lets the grant and the card's
// approval take effect only if the card, its session and the vault epoch
// are still the ones it was given for. b.mu held; returns with it
// released.
func (b *Broker) grantLocked(p *pending, via Via) error {
	g, err := b.newGrantLocked(p, via)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	if p.verifying {
		b.mu.Unlock()
		return ErrVerifying
	}
	p.verifying = true
	b.mu.Unlock()
	r, _ := b.cfg.Recorder.(GrantRecorder)
	if r != nil {
		err = r.GrantGiven(context.Background(), *g)
	}
	b.mu.Lock()
	p.verifying = false
	s := b.sessions[p.req.RunID]
	live := b.pending[p.req.ID] == p && p.epoch == b.cfg.Epoch() && s != nil && s.ID == g.SessionID && !b.closed
	switch {
	case err != nil:
		if b.finishLocked(p, ErrAuditUnavailable) {
			b.decideLocked(p, OutcomeRefused, via.Surface)
		}
		b.mu.Unlock()
		b.notify(Update{Pending: true})
		return ErrAuditUnavailable
	case !live:
		if b.finishLocked(p, ErrWithdrawn) {
			b.decideLocked(p, OutcomeRefused, via.Surface)
		}
		b.mu.Unlock()
		if r != nil {
			r.GrantEnded(*g, audit.ReasonVaultStateChanged)
		}
		b.notify(Update{Pending: true})
		return ErrWithdrawn
	}
	id := g.ID
	g.timer = time.AfterFunc(time.Until(g.Until), func() { b.expireGrant(id) })
	b.grants[g.ID] = g
	p.via = via
	b.finishLocked(p, nil)
	b.decideLocked(p, OutcomeApproved, via.Surface)
	d := &b.decisions[len(b.decisions)-1]
	d.Grant, d.GrantUntil = g.Words, g.Until
	b.mu.Unlock()
	b.notify(Update{Pending: true, Sessions: true})
	return nil
}
