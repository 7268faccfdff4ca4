package notify

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
)

// RelayConfig is what a Relay connects.
type RelayConfig struct {
	Broker *approval.Broker
	// Notifier may be nil: notifications are unavailable, and every card
	// raises the window instead.
	Notifier Notifier
	// Policy returns the person's policy now.
	Policy func() Policy
	// Raise brings the window forward with card in view; nil where there
	// is no window (yett serve).
	Raise func(card string)
	// Record writes an audit entry (a refused answer); nil records nothing.
	Record func(audit.Event) error
	// Trust says whether an Approve from a notification can take effect
	// now (the person's system verification is available, and the server
	// is the one the person trusts), which server may carry it (its
	// unique bus name, "" for the OS's own notifications) and, when none
	// may, why in words for the person. Notifications offer Approve only
	// to that server, and an Approve from any other is refused. nil:
	// always, from any server.
	Trust  func() (server string, ok bool, why string)
	Logger *slog.Logger
	// Now is the clock (tests).
	Now func() time.Time
}

// Refused answers are audited at most this often per minute; beyond it
// they are counted and logged, so a flood of forged signals cannot fill
// the audit log.
const maxRefusalsPerMinute = 20

// Relay keeps one notification per pending card of one broker, and hands
// the answers given in them to the broker. Safe for concurrent use.
type Relay struct {
	cfg   RelayConfig
	log   *slog.Logger
	unsub func()
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	shown   map[string]Notification // card -> what its notification says
	raised  map[string]bool         // cards whose window was raised instead
	window  time.Time               // start of the current refusal-rate minute
	refused int
	dropped int
}

// StartRelay starts relaying cfg.Broker's cards. Cards already pending get
// their notifications at once.
func StartRelay(cfg RelayConfig) *Relay {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Policy == nil {
		cfg.Policy = DefaultPolicy
	}
	r := &Relay{
		cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		shown: map[string]Notification{}, raised: map[string]bool{},
	}
	// The broker delivers on the goroutine that changed it (a gateway
	// call, an answer): the relay only marks that it must look again, and
	// talks to the notification server on its own goroutine.
	r.unsub = cfg.Broker.Subscribe(func(u approval.Update) {
		if u.Pending {
			r.Resync()
		}
	})
	go r.run()
	r.Resync()
	return r
}

// Resync makes the notifications match the pending cards and the policy
// again (the policy changed, or the notification server did).
func (r *Relay) Resync() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Forget drops what the relay believes is shown (the notification server
// went away: nothing is) and resyncs.
func (r *Relay) Forget() {
	r.mu.Lock()
	r.shown = map[string]Notification{}
	r.mu.Unlock()
	r.Resync()
}

// Close stops relaying and withdraws the notifications it showed. The
// Notifier stays open: its owner closes it.
func (r *Relay) Close() {
	r.unsub()
	close(r.stop)
	<-r.done
	r.mu.Lock()
	cards := make([]string, 0, len(r.shown))
	for c := range r.shown {
		cards = append(cards, c)
	}
	r.shown = map[string]Notification{}
	r.mu.Unlock()
	if n := r.cfg.Notifier; n != nil {
		for _, c := range cards {
			n.Withdraw(c)
		}
	}
}

func (r *Relay) run() {
	defer close(r.done)
	for {
		select {
		case <-r.stop:
			return
		case <-r.kick:
			r.sync()
		}
	}
}

// sync withdraws the notifications of cards that are no longer pending
// first (at once: an answered or withdrawn card must not look answerable),
// then shows (or replaces) those of pending cards.
func (r *Relay) sync() {
	pending := r.cfg.Broker.Pending()
	live := make(map[string]approval.Request, len(pending))
	for _, p := range pending {
		live[p.ID] = p
	}
	r.mu.Lock()
	var gone []string
	for c := range r.shown {
		if _, ok := live[c]; !ok {
			gone = append(gone, c)
			delete(r.shown, c)
		}
	}
	for c := range r.raised {
		if _, ok := live[c]; !ok {
			delete(r.raised, c)
		}
	}
	r.mu.Unlock()
	n := r.cfg.Notifier
	for _, c := range gone {
		if err := n.Withdraw(c); err != nil {
			r.log.Warn("notify: withdrawing a notification", "card", c, "err", err)
		}
	}
	policy := r.cfg.Policy()
	now := r.cfg.Now()
	server, canApprove, untrusted := r.trust()
	for _, p := range pending {
		why := "you chose to answer this only in the Yett window"
		if !canApprove {
			why = untrusted
		}
		want := ComposeWhy(p, canApprove && policy.Allows(p), why, now)
		want.Server = server
		r.mu.Lock()
		had, ok := r.shown[p.ID]
		r.mu.Unlock()
		if ok && had.Answerable == want.Answerable && had.Server == want.Server {
			continue
		}
		if n == nil {
			r.raise(p.ID)
			continue
		}
		if err := n.Show(want); err != nil {
			r.log.Warn("notify: showing a notification failed; raising the window instead", "card", p.ID, "err", err)
			r.raise(p.ID)
			continue
		}
		r.mu.Lock()
		r.shown[p.ID] = want
		r.mu.Unlock()
		if !n.Status().Actions {
			// The notification only says an agent waits: the window
			// carries the buttons.
			r.raise(p.ID)
		}
	}
}

func (r *Relay) trust() (server string, ok bool, why string) {
	if r.cfg.Trust == nil {
		return "", true, ""
	}
	return r.cfg.Trust()
}

// raise brings the window up with card, once per card.
func (r *Relay) raise(card string) {
	r.mu.Lock()
	done := r.raised[card]
	r.raised[card] = true
	r.mu.Unlock()
	if !done && r.cfg.Raise != nil {
		r.cfg.Raise(card)
	}
}

// Respond takes a believed answer from the Notifier.
func (r *Relay) Respond(resp Response) {
	if resp.Action == ActionOpen {
		if r.cfg.Raise != nil {
			r.cfg.Raise(resp.Card)
		}
		return
	}
	if resp.Action == ActionApprove {
		// Checked again as the answer arrives: the server may have
		// changed, or an agent run may have turned out to be its parent,
		// since the notification was shown.
		if server, ok, why := r.trust(); !ok || server != resp.Server.Name {
			if ok {
				why = "the notification server changed since the notification was shown"
			}
			r.log.Warn("notify: refused an Approve from a notification server the person has not accepted", "card", resp.Card, "server", resp.Server.String(), "why", why)
			r.record(audit.ReasonServerNotAccepted, Rejected{Card: resp.Card, Action: string(resp.Action), Sender: resp.Server.Name})
			if r.cfg.Raise != nil {
				r.cfg.Raise(resp.Card)
			}
			return
		}
	}
	via := approval.Via{Surface: approval.SurfaceNotification}
	if resp.Server.Name != "" {
		via.Detail = resp.Server.String()
	}
	err := r.cfg.Broker.AnswerVia(resp.Card, resp.Action == ActionApprove, via)
	switch {
	case err == nil:
		return
	case errors.Is(err, approval.ErrWindowOnly):
		// The notification offered no such button; whoever asked, the
		// broker refused it. The person answers in the window.
		r.record(audit.ReasonWindowOnly, Rejected{Card: resp.Card, Action: string(resp.Action)})
		if r.cfg.Raise != nil {
			r.cfg.Raise(resp.Card)
		}
		return
	}
	r.tellGone(resp.Card, err)
}

// tellGone answers an answer that came too late: the card was answered
// elsewhere, expired, or was withdrawn.
func (r *Relay) tellGone(card string, err error) {
	n := r.cfg.Notifier
	if n == nil {
		return
	}
	body := "This request is no longer waiting: it was answered in Yett's window or at a terminal, it timed out, or the agent went away. Nothing changed."
	switch {
	case errors.Is(err, approval.ErrWithdrawn):
		body = "This request was withdrawn (the agent exited, or the vault was locked or unlocked). Nothing was approved."
	case errors.Is(err, approval.ErrAuditUnavailable):
		body = "Yett could not record the approval in its audit log, so the request was refused."
	}
	info := Notification{Card: "gone:" + card, Title: "Yett: request no longer waiting", Body: body, Expires: r.cfg.Now().Add(8 * time.Second)}
	if e := n.Show(info); e != nil {
		r.log.Warn("notify: telling the person a card is gone", "err", e)
	}
}

// Reject takes something the Notifier did not believe: it is audited as a
// forged answer, and changes nothing.
func (r *Relay) Reject(rj Rejected) {
	r.log.Warn("notify: refused a forged answer", "card", rj.Card, "sender", rj.Sender, "why", rj.Why)
	r.record(audit.ReasonForgedAnswer, rj)
}

func (r *Relay) record(reason audit.Reason, rj Rejected) {
	if r.cfg.Record == nil {
		return
	}
	now := r.cfg.Now()
	r.mu.Lock()
	if now.Sub(r.window) >= time.Minute {
		if r.dropped > 0 {
			r.log.Warn("notify: refused answers not audited (over the rate limit)", "count", r.dropped)
		}
		r.window, r.refused, r.dropped = now, 0, 0
	}
	over := r.refused >= maxRefusalsPerMinute
	if over {
		r.dropped++
	} else {
		r.refused++
	}
	r.mu.Unlock()
	if over {
		return
	}
	err := r.cfg.Record(audit.Event{
		Type: audit.EventAnswerRefused, Time: now.UTC(), Surface: approval.SurfaceNotification, Reason: reason,
		Answer: &audit.Answer{RequestID: rj.Card, Action: rj.Action, Sender: rj.Sender, NotificationID: rj.NotificationID},
	})
	if err != nil {
		r.log.Error("notify: the audit log refused a refused answer", "err", err)
	}
}
