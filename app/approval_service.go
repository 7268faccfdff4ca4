package app

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/presence"
)

// EventApprovalChanged carries an ApprovalState whenever a card appears or
// is withdrawn, or a session starts or ends.
const EventApprovalChanged = "approval:changed"

// SurfaceDesktopCard is how the audit log names answers given in the app.
const SurfaceDesktopCard = approval.SurfaceApp

// errNoGateway is what the UI says while no gateway is attached: there is
// nothing to answer or revoke then, because the broker holds everything.
var errNoGateway = shown("Yett's gateway is not running, so no agent is waiting and no session is live.")

// ApprovalService is bound to the UI as window.go.app.ApprovalService. It
// shows the gateway's pending approval cards and live sessions as redacted
// views and passes the person's answers back. It never decides anything
// itself: the broker it is attached to does.
//
// Until the gateway starts it has no broker: lists are empty and answers
// are refused with chosen text.
type ApprovalService struct {
	events *eventSink
	log    *slog.Logger
	now    func() time.Time

	mu     sync.Mutex
	broker *approval.Broker
	cancel func()

	// pushMu keeps read-then-send atomic, so two pushes racing (attach and
	// a broker update) cannot deliver an older state last.
	pushMu sync.Mutex

	// onWaiting hears which cards wait after every push (the window
	// title, the tray); nil in tests.
	onWaiting func(cards []ApprovalCard)
}

func newApprovalService(events *eventSink, log *slog.Logger) *ApprovalService {
	return &ApprovalService{events: events, log: log, now: time.Now}
}

// attach connects the service to a started gateway's broker (nil detaches,
// when the gateway stops) and pushes the state at once, so the UI never
// shows cards of a broker that is gone.
func (s *ApprovalService) attach(b *approval.Broker) {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	s.broker = b
	if b != nil {
		s.cancel = b.Subscribe(func(approval.Update) { s.push() })
	}
	s.mu.Unlock()
	s.push()
}

func (s *ApprovalService) close() {
	if s != nil {
		s.attach(nil)
	}
}

func (s *ApprovalService) current() *approval.Broker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broker
}

// push sends the whole state rather than the change: the UI replaces what
// it shows, so a missed or reordered event cannot leave a stale card.
func (s *ApprovalService) push() {
	s.pushMu.Lock()
	defer s.pushMu.Unlock()
	st := ApprovalState{Cards: s.Pending(), Sessions: s.Sessions(), Decisions: s.Decisions(), Grants: s.Grants()}
	s.events.send(EventApprovalChanged, st)
	if s.onWaiting != nil {
		s.onWaiting(st.Cards)
	}
}

// Decisions lists the recent answers and expiries, newest first: what was
// asked, how it ended, who answered and where.
func (s *ApprovalService) Decisions() []DecisionView {
	out := []DecisionView{}
	b := s.current()
	if b == nil {
		return out
	}
	for _, d := range b.Decisions() {
		out = append(out, decisionView(d))
	}
	return out
}

// Pending lists the cards waiting for the person, oldest first.
func (s *ApprovalService) Pending() []ApprovalCard {
	out := []ApprovalCard{}
	b := s.current()
	if b == nil {
		return out
	}
	now := s.now()
	for _, r := range b.Pending() {
		c := cardView(r, now)
		c.Verifies = b.VerificationRequired(r, approval.Via{Surface: SurfaceDesktopCard})
		out = append(out, c)
	}
	return out
}

// Sessions lists the live session approvals, oldest first.
func (s *ApprovalService) Sessions() []LiveSession {
	out := []LiveSession{}
	b := s.current()
	if b == nil {
		return out
	}
	for _, sess := range b.Sessions() {
		out = append(out, sessionView(sess))
	}
	return out
}

// Answer approves or denies a pending card from the desktop app.
func (s *ApprovalService) Answer(id string, approve bool) error {
	b := s.current()
	if b == nil {
		return errNoGateway
	}
	return s.publicError(b.AnswerVia(id, approve, approval.Via{Surface: SurfaceDesktopCard, Detail: "click or key in the window"}))
}

// AnswerGrant approves a per-call card from the desktop app and lets the
// same run's calls like it (the card's grantWords) through without a card
// for grantMinutes, or until the agent exits, the vault locks or Yett
// restarts.
func (s *ApprovalService) AnswerGrant(id string) error {
	b := s.current()
	if b == nil {
		return errNoGateway
	}
	return s.publicError(b.AnswerGrant(id, approval.Via{Surface: SurfaceDesktopCard, Detail: "click or key in the window"}))
}

// AnswerRuns approves or denies, in one action, the session cards of runs
// of one program that wait together (their cards' program is the same).
// Each card is still its own approval of its own run, recorded on its own,
// and asks the system to confirm it is the person if it would alone. It
// refuses a set that mixes programs, targets or call cards, answering none.
func (s *ApprovalService) AnswerRuns(ids []string, approve bool) (RunsAnswered, error) {
	out := RunsAnswered{Answered: []string{}, Failed: []RunAnswerFail{}}
	b := s.current()
	if b == nil {
		return out, errNoGateway
	}
	byID := map[string]approval.Request{}
	for _, r := range b.Pending() {
		byID[r.ID] = r
	}
	program := ""
	for i, id := range ids {
		r, ok := byID[id]
		p := programOf(r)
		if !ok || p == "" || i > 0 && p != program {
			return out, s.publicError(errNotOneProgram)
		}
		program = p
	}
	if len(ids) == 0 {
		return out, s.publicError(errNotOneProgram)
	}
	via := approval.Via{Surface: SurfaceDesktopCard, Detail: fmt.Sprintf("one action in the window for %d runs of the same program", len(ids))}
	for _, id := range ids {
		if err := b.AnswerVia(id, approve, via); err != nil {
			out.Failed = append(out.Failed, RunAnswerFail{ID: id, Error: s.publicError(err).Error()})
			continue
		}
		out.Answered = append(out.Answered, id)
	}
	return out, nil
}

// errNotOneProgram: AnswerRuns was given cards that are not session cards
// of runs of one program waiting together.
var errNotOneProgram = errors.New("approval: not session cards of one program")

// Grants lists the time-boxed grants in force, oldest first.
func (s *ApprovalService) Grants() []LiveGrant {
	out := []LiveGrant{}
	b := s.current()
	if b == nil {
		return out
	}
	for _, g := range b.Grants() {
		out = append(out, grantView(g))
	}
	return out
}

// RevokeGrant ends a time-boxed grant at once; its session stays, and the
// agent's next call like it gets a card again.
func (s *ApprovalService) RevokeGrant(id string) error {
	b := s.current()
	if b == nil {
		return errNoGateway
	}
	return s.publicError(b.RevokeGrant(id))
}

// Revoke ends a live session at once; the agent's next call needs a new
// approval.
func (s *ApprovalService) Revoke(sessionID string) error {
	b := s.current()
	if b == nil {
		return errNoGateway
	}
	return s.publicError(b.Revoke(sessionID))
}

// approvalTexts are the words the person reads for the broker's documented
// errors; the broker's own texts are written for logs.
var approvalTexts = []known{
	{approval.ErrNotPending, "This request is no longer waiting: it was answered, timed out or withdrawn."},
	{approval.ErrWithdrawn, "This request was withdrawn: the agent exited, or the vault was locked or unlocked. Nothing was approved."},
	{approval.ErrAuditUnavailable, "Yett could not record the approval in its audit log, so the request was refused."},
	{approval.ErrNoSession, "This session has already ended."},
	{approval.ErrNoGrant, "This grant has already ended."},
	{errNotOneProgram, "These cards are not runs of one program asking for the same thing, all still waiting: answer them one by one. Nothing was answered."},
	{approval.ErrNotGrantable, "This card cannot allow calls like it for a while: approve this call alone, or deny it."},
	{approval.ErrClosed, "Yett's gateway has stopped; the request was withdrawn."},
	{presence.ErrUnavailable, "Approving needs your system to confirm it is you, and it cannot here (no polkit authentication agent is running). Start your desktop's polkit agent, or choose when Yett asks in Settings. Nothing was approved."},
	{approval.ErrNotVerified, "Your system did not confirm it was you (the password was wrong, or the prompt was cancelled), so nothing was approved. The request is still waiting: approve it again to retry, or deny it."},
	{approval.ErrVerifying, "Your system is already asking you to confirm this approval: answer its prompt."},
}

func (s *ApprovalService) publicError(err error) error {
	return publicError(s.log, "approval operation", err, approvalTexts)
}
