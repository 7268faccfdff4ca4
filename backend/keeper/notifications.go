package keeper

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/notify"
)

// notifications is the keeper's part that shows the gateway's cards as
// native notifications: one Notifier for the process, one Relay for each
// gateway the keeper runs, and the person's policy, enforced by the broker.
type notifications struct {
	notifier notify.Notifier // nil when the front end wants none or the desktop has none
	problem  string          // why there is no notifier
	relay    *notify.Relay   // the running gateway's; k.mu
}

// openNotifications opens the front end's notifier with handlers that go to
// whichever relay runs when an answer arrives. k.mu held.
func (k *Keeper) openNotificationsLocked() {
	if k.cfg.Notify == nil {
		return
	}
	n, err := k.cfg.Notify(notify.Handlers{
		Respond:       func(r notify.Response) { k.withRelay(func(rl *notify.Relay) { rl.Respond(r) }) },
		Reject:        func(r notify.Rejected) { k.withRelay(func(rl *notify.Relay) { rl.Reject(r) }) },
		ServerChanged: k.notificationServerChanged,
	})
	if err != nil {
		k.notes.problem = "Notifications are unavailable on this desktop, so Yett shows its window when an agent asks."
		if errors.Is(err, notify.ErrUnavailable) {
			k.log.Info("notifications unavailable", "why", err)
		} else {
			k.log.Warn("notifications could not start", "err", err)
		}
		return
	}
	k.notes.notifier = n
}

// withRelay runs fn with the running gateway's relay, if one runs. A
// forged answer while no gateway runs is still audited (when the log is
// open): there is no card it could have answered.
func (k *Keeper) withRelay(fn func(*notify.Relay)) {
	k.mu.Lock()
	rl := k.notes.relay
	k.mu.Unlock()
	if rl != nil {
		fn(rl)
	}
}

func (k *Keeper) notificationServerChanged() {
	k.withRelay(func(rl *notify.Relay) { rl.Forget() })
	k.mu.Lock()
	st := k.stateLocked()
	k.mu.Unlock()
	k.changes.Publish(st)
}

// startRelayLocked makes broker enforce the policy and relays its cards.
// Set before the relay starts: no notification can answer a card before
// the broker enforces the policy. k.mu held.
func (k *Keeper) startRelayLocked(b *approval.Broker) {
	b.SetAnswerPolicy(notify.AnswerPolicy(k.NotificationPolicy))
	b.SetVerifier(verifier{k})
	if k.cfg.Notify == nil && k.cfg.Raise == nil {
		return
	}
	k.notes.relay = notify.StartRelay(notify.RelayConfig{
		Broker: b, Notifier: k.notes.notifier, Policy: k.NotificationPolicy, Raise: k.cfg.Raise,
		Record: k.recordAnswer, Logger: k.log,
		// An approval from a notification needs the person's system
		// verification: where there is none, notifications carry no
		// Approve at all.
		CanApprove: func() bool { ok, _ := k.CanVerify(); return ok },
	})
}

// stopRelayLocked withdraws the notifications of the stopping gateway's
// cards. k.mu held.
func (k *Keeper) stopRelayLocked() {
	if rl := k.notes.relay; rl != nil {
		k.notes.relay = nil
		rl.Close()
	}
}

func (k *Keeper) closeNotifications() {
	if n := k.notes.notifier; n != nil {
		if err := n.Close(); err != nil {
			k.log.Warn("closing notifications", "err", err)
		}
	}
}

// recordAnswer writes a refused answer to the audit log, under this
// keeper's boot id. The log's own lock orders it; k.mu is not held while
// it writes.
func (k *Keeper) recordAnswer(e audit.Event) error {
	k.mu.Lock()
	log := k.audit
	k.mu.Unlock()
	if log == nil {
		return errors.New("keeper: the audit log is not open")
	}
	e.BootID = k.BootID()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := log.Append(ctx, e)
	return err
}

// NotificationPolicy is the person's policy for answering cards from
// notifications.
func (k *Keeper) NotificationPolicy() notify.Policy {
	return k.currentControls().notificationPolicy()
}

// SetNotificationPolicy stores p and applies it at once: the broker
// enforces it from the next answer, and shown notifications gain or lose
// their buttons.
func (k *Keeper) SetNotificationPolicy(p notify.Policy) error {
	if p.WindowOnly == nil {
		p.WindowOnly = []string{}
	}
	if err := p.Check(); err != nil {
		return err
	}
	why := fmt.Sprintf("notifications: session cards %v, call cards %v, %d window-only", p.SessionCards, p.CallCards, len(p.WindowOnly))
	if err := k.changeControls(why, func(c *Controls) { c.Notifications = &p }); err != nil {
		return err
	}
	k.log.Info("notification policy changed", "session_cards", p.SessionCards, "call_cards", p.CallCards, "window_only", len(p.WindowOnly))
	return nil
}

// notificationStatus says what Settings shows. k.mu held.
func (k *Keeper) notificationStatusLocked() notify.Status {
	if n := k.notes.notifier; n != nil {
		return n.Status()
	}
	if k.notes.problem != "" {
		return notify.Status{Problem: k.notes.problem}
	}
	return notify.Status{Problem: "This front end shows no notifications."}
}
