package keeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/notify"
	"github.com/yettdev/yett/backend/presence"
)

// notifications is the keeper's part that shows the gateway's cards as
// native notifications: one Notifier for the process, one Relay for each
// gateway the keeper runs, and the person's policy, enforced by the broker.
type notifications struct {
	*Keeper
	notifier   notify.Notifier // nil when the front end wants none or the desktop has none
	noNotifier string          // why there is no notifier
	relay      *notify.Relay   // the running gateway's; k.mu
	// pinned is the notification server trusted at the last unlock or
	// accepted by the person since: only it gets Approve and Deny. nil:
	// none (no server ran at unlock, or it was not the one the person
	// accepted before).
	pinned atomic.Pointer[pin]
	// broker is the relayed gateway's broker, for the relay's questions.
	broker atomic.Pointer[approval.Broker]
}

// pin is a trusted notification server, or why the one at unlock was not
// trusted.
type pin struct {
	server notify.Server
	// refused, when set, says why the server that owned the name at the
	// unlock was not pinned.
	refused string
}

// openNotifications opens the front end's notifier with handlers that go to
// whichever relay runs when an answer arrives. k.mu held.
func (k *notifications) openNotificationsLocked() {
	if k.cfg.Notify == nil {
		return
	}
	n, err := k.cfg.Notify(notify.Handlers{
		Respond:       func(r notify.Response) { k.withRelay(func(rl *notify.Relay) { rl.Respond(r) }) },
		Reject:        func(r notify.Rejected) { k.withRelay(func(rl *notify.Relay) { rl.Reject(r) }) },
		ServerChanged: k.notificationServerChanged,
	})
	if err != nil {
		k.noNotifier = "Notifications are unavailable on this desktop, so Yett shows its window when an agent asks."
		if errors.Is(err, notify.ErrUnavailable) {
			k.log.Info("notifications unavailable", "why", err)
		} else {
			k.log.Warn("notifications could not start", "err", err)
		}
		return
	}
	k.notifier = n
}

// withRelay runs fn with the running gateway's relay, if one runs. A
// forged answer while no gateway runs is still audited (when the log is
// open): there is no card it could have answered.
func (k *notifications) withRelay(fn func(*notify.Relay)) {
	k.mu.Lock()
	rl := k.relay
	k.mu.Unlock()
	if rl != nil {
		fn(rl)
	}
}

// notificationServerChanged: another server owns the name, or none does.
// The new owner is not pinned: its notifications say "open Yett" until the
// person accepts it in the window.
func (k *notifications) notificationServerChanged() {
	if n := k.notifier; n != nil {
		k.log.Warn("the notification server changed", "now", n.Status().Owner.String())
	}
	k.withRelay(func(rl *notify.Relay) { rl.Forget() })
	k.mu.Lock()
	st := k.stateLocked()
	k.mu.Unlock()
	k.changes.Publish(st)
}

// startRelayLocked makes broker enforce the policy and relays its cards.
// Set before the relay starts: no notification can answer a card before
// the broker enforces the policy. k.mu held.
func (k *notifications) startRelayLocked(b *approval.Broker) {
	b.SetAnswerPolicy(notify.AnswerPolicy(k.NotificationPolicy))
	b.SetVerifier(verifier{k.Keeper})
	if k.cfg.Notify == nil && k.cfg.Raise == nil {
		return
	}
	k.pinNotificationServerLocked()
	k.broker.Store(b)
	k.relay = notify.StartRelay(notify.RelayConfig{
		Broker: b, Notifier: k.notifier, Policy: k.NotificationPolicy, Raise: k.cfg.Raise,
		Record: k.recordAnswer, Logger: k.log,
		// An approval from a notification needs the person's system
		// verification and the server they trust: otherwise
		// notifications carry no Approve at all.
		Trust: k.notificationTrust,
	})
}

// pinNotificationServerLocked trusts the server that owns the name now,
// at an unlock: unless it runs another program than the one the person
// last accepted (sealed in the controls). Whether an agent run started it
// is checked whenever trust is asked. k.mu held.
func (k *notifications) pinNotificationServerLocked() {
	n := k.notifier
	if n == nil {
		return
	}
	// Asked afresh: a server that took the name a moment ago may not have
	// reached the notifier's cached status yet.
	st := n.Status()
	if r, ok := n.(interface{ Refresh() notify.Status }); ok {
		st = r.Refresh()
	}
	owner := st.Owner
	switch acc := k.ctl.currentControls().NotificationServer; {
	case owner.Name == "":
		k.pinned.Store(nil)
	case acc != nil && (acc.Exe != owner.Process.ExePath || acc.SHA256 != owner.Process.ExeHash()):
		k.pinned.Store(&pin{refused: fmt.Sprintf("it runs %s, not %s, which you accepted", orUnknown(owner.Process.ExePath), acc.Exe)})
		k.log.Warn("the notification server at unlock is not the one accepted", "server", owner.String(), "accepted", acc.Exe)
	default:
		k.pinned.Store(&pin{server: owner})
	}
	if rl := k.relay; rl != nil {
		rl.Resync()
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown program"
	}
	return s
}

// NotificationServer is what Settings shows of the notification server.
type NotificationServer struct {
	// Current describes the server that owns the name now ("" for none,
	// or where the OS shows notifications itself).
	Current string
	// Name is its unique bus name: what AcceptNotificationServer takes.
	Name string
	// Trusted: it may carry Approve and Deny. Otherwise Why says why not.
	Trusted bool
	Why     string
}

// NotificationServerState says whether the server that owns the name now
// is the trusted one, and why not.
func (k *Keeper) NotificationServerState() NotificationServer {
	owner, ok, why := k.notes.serverNow()
	if owner.Name == "" {
		return NotificationServer{Trusted: true}
	}
	return NotificationServer{Current: owner.String(), Name: owner.Name, Trusted: ok, Why: why}
}

// serverNow is the server that owns the name now ("" where there is none
// to pin), whether it is trusted, and why not. It takes no lock of the
// keeper's: the relay asks it on its goroutine, which stopping the relay
// under k.mu waits for, and stateLocked asks it under k.mu.
func (k *notifications) serverNow() (notify.Server, bool, string) {
	n := k.notifier
	if n == nil {
		return notify.Server{}, true, ""
	}
	owner := n.Status().Owner
	if owner.Name == "" {
		return owner, true, ""
	}
	ok, why := k.serverTrusted(owner, k.broker.Load())
	return owner, ok, why
}

// serverTrusted says whether owner is the pinned server and no agent run
// of b is among its ancestors (an agent that started its own server before
// the unlock).
func (k *notifications) serverTrusted(owner notify.Server, b *approval.Broker) (bool, string) {
	p := k.pinned.Load()
	switch {
	case p != nil && p.refused != "":
		return false, "this notification server is not the one you accepted: " + p.refused + "."
	case p == nil:
		return false, "this notification server started after you unlocked Yett, and no server you trust was running then."
	case p.server.Name != owner.Name:
		return false, "the notification server changed since you unlocked Yett (it was " + p.server.String() + ")."
	}
	if b == nil {
		return true, ""
	}
	runs := map[int]string{}
	for _, r := range b.Pending() {
		runs[r.Who.PID], runs[r.Who.ShimPID] = r.Who.Name, "yett mcp"
	}
	for _, s := range b.Sessions() {
		runs[s.Who.PID] = s.Who.Name
	}
	for pid, name := range runs {
		if pid > 0 && owner.Process.HasAncestor(pid) {
			return false, fmt.Sprintf("this notification server was started by an agent run (%s, pid %d).", name, pid)
		}
	}
	return true, ""
}

// notificationTrust is the relay's Trust: the server that may carry
// Approve, or why none may.
func (k *notifications) notificationTrust() (string, bool, string) {
	if ok, _ := k.CanVerify(); !ok {
		return "", false, "approving from a notification needs your system's verification, which is not available here"
	}
	owner, ok, why := k.serverNow()
	if !ok {
		return "", false, strings.TrimSuffix(why, ".") + "; accept it in Yett's Settings to answer from notifications"
	}
	return owner.Name, true, ""
}

// Errors of AcceptNotificationServer, in words for the person.
var (
	ErrServerChanged = errors.New("The notification server is not the one Settings showed (it changed, or there is none): look again before you accept it.")
	ErrNotConfirmed  = errors.New("Your system did not confirm it is you, so the notification server was not accepted.")
)

// AcceptNotificationServer trusts the server that owns the name now, which
// must still be name (what Settings showed): the person saw it and
// accepted it in the window. Where the system can verify the person, it
// asks first. The program it runs is sealed in the controls (an unlock
// later trusts only a server running that program), and the acceptance
// is audited as a change of the controls.
func (k *Keeper) AcceptNotificationServer(ctx context.Context, name string) error {
	n := k.notes.notifier
	if n == nil {
		return ErrServerChanged
	}
	owner := n.Status().Owner
	if owner.Name == "" || owner.Name != name {
		return ErrServerChanged
	}
	if ok, _ := k.CanVerify(); ok {
		if _, err := k.ctl.presence().Verify(ctx, presence.Request{Card: "notification-server:" + name,
			Summary: "Trust " + owner.String() + " to answer Yett's approval cards"}); err != nil {
			k.log.Info("accepting a notification server: the system did not confirm the person", "err", err)
			return ErrNotConfirmed
		}
	}
	why := "notification server accepted: " + owner.String()
	err := k.ctl.changeControls(why, func(c *Controls) {
		c.NotificationServer = &AcceptedServer{Exe: owner.Process.ExePath, SHA256: owner.Process.ExeHash(), Product: owner.Product}
	})
	if err != nil {
		return err
	}
	k.notes.pinned.Store(&pin{server: owner})
	k.log.Info("notification server accepted", "server", owner.String())
	k.notes.withRelay(func(rl *notify.Relay) { rl.Forget() })
	k.mu.Lock()
	st := k.stateLocked()
	k.mu.Unlock()
	k.changes.Publish(st)
	return nil
}

// stopRelayLocked withdraws the notifications of the stopping gateway's
// cards. k.mu held.
func (k *notifications) stopRelayLocked() {
	if rl := k.relay; rl != nil {
		k.relay = nil
		rl.Close()
	}
	k.broker.Store(nil)
}

func (k *notifications) closeNotifications() {
	if n := k.notifier; n != nil {
		if err := n.Close(); err != nil {
			k.log.Warn("closing notifications", "err", err)
		}
	}
}

// recordAnswer writes a refused answer to the audit log, under this
// keeper's boot id. The log's own lock orders it; k.mu is not held while
// it writes.
func (k *notifications) recordAnswer(e audit.Event) error {
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
	return k.ctl.currentControls().notificationPolicy()
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
	if err := k.ctl.changeControls(why, func(c *Controls) { c.Notifications = &p }); err != nil {
		return err
	}
	k.log.Info("notification policy changed", "session_cards", p.SessionCards, "call_cards", p.CallCards, "window_only", len(p.WindowOnly))
	return nil
}

// notificationStatus says what Settings shows. k.mu held.
func (k *notifications) notificationStatusLocked() notify.Status {
	if n := k.notifier; n != nil {
		return n.Status()
	}
	if k.noNotifier != "" {
		return notify.Status{Problem: k.noNotifier}
	}
	return notify.Status{Problem: "This front end shows no notifications."}
}
