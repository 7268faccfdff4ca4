//go:build linux

package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/yettdev/yett/backend/busconn"
	"github.com/yettdev/yett/backend/procid"
)

// The freedesktop Desktop Notifications interface and the bus itself.
const (
	fdoName      = "org.freedesktop.Notifications"
	fdoPath      = dbus.ObjectPath("/org/freedesktop/Notifications")
	fdoInterface = "org.freedesktop.Notifications"
	busName      = "org.freedesktop.DBus"

	// category names Yett's notifications for servers that group or style
	// by it (the spec's x-vendor.class form).
	category = "x-yett.approval"
	// urgencyNormal: an approval waits for the person, it is not an alarm.
	urgencyNormal = byte(1)
	// defaultAction is the spec's key for a click on the body.
	defaultAction = "default"
	// maxRetired bounds the nonces remembered of withdrawn notifications.
	maxRetired = 256
)

// freedesktop is a Notifier on the session bus.
type freedesktop struct {
	opts Options
	h    Handlers
	conn *dbus.Conn

	// callMu keeps calls to the server in order (a withdraw never passes
	// the show it withdraws).
	callMu sync.Mutex
	// refreshMu keeps status refreshes in order.
	refreshMu sync.Mutex

	mu      sync.Mutex
	byCard  map[string]*shown
	byID    map[uint32]*shown
	retired map[string]string // nonce -> card, for answers to withdrawn notifications
	order   []string          // retired nonces, oldest first
	status  Status
	caps    []string
	closed  bool
	done    chan struct{}
}

// shown is one notification the server returned an id for.
type shown struct {
	card  string
	id    uint32
	owner string // the unique name that returned id
	nonce string
}

// Open connects to the session bus's notification server. It fails with
// ErrUnavailable only when there is no session bus; a bus without a
// server gives a Notifier whose Status says so, and which starts working
// when a server appears.
func Open(h Handlers, opts Options) (Notifier, error) {
	opts.defaults()
	addr, err := busconn.SessionAddress(opts.BusAddress)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	conn, err := busconn.Dial(context.Background(), addr, opts.CallTimeout)
	if err != nil {
		return nil, fmt.Errorf("%w: session bus: %v", ErrUnavailable, err)
	}
	f := &freedesktop{
		opts: opts, h: h, conn: conn, byCard: map[string]*shown{}, byID: map[uint32]*shown{},
		retired: map[string]string{}, done: make(chan struct{}),
	}
	ch := make(chan *dbus.Signal, 64)
	conn.Signal(ch)
	ctx, cancel := context.WithTimeout(context.Background(), opts.CallTimeout)
	defer cancel()
	// No sender in the rules: a forged signal must reach us to be audited.
	// Signals sent to our unique name arrive whatever the rules say.
	for _, rule := range [][]dbus.MatchOption{
		{dbus.WithMatchInterface(fdoInterface), dbus.WithMatchMember("ActionInvoked")},
		{dbus.WithMatchInterface(fdoInterface), dbus.WithMatchMember("NotificationClosed")},
		{dbus.WithMatchSender(busName), dbus.WithMatchInterface(busName), dbus.WithMatchMember("NameOwnerChanged"), dbus.WithMatchArg(0, fdoName)},
	} {
		if err := conn.AddMatchSignalContext(ctx, rule...); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%w: subscribing to the notification server: %v", ErrUnavailable, err)
		}
	}
	f.refreshStatus()
	go f.loop(ch)
	return f, nil
}

func (f *freedesktop) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), f.opts.CallTimeout)
}

// owner asks the bus which unique name owns the notification service now.
func (f *freedesktop) owner() (string, error) {
	ctx, cancel := f.ctx()
	defer cancel()
	var owner string
	err := f.conn.BusObject().CallWithContext(ctx, busName+".GetNameOwner", 0, fdoName).Store(&owner)
	return owner, err
}

// Refresh asks the bus again who owns the service and what it is, and
// returns the status that follows.
func (f *freedesktop) Refresh() Status {
	f.refreshStatus()
	return f.Status()
}

// refreshStatus asks the server what it is and what it can do. One at a
// time: the last to finish asked last.
func (f *freedesktop) refreshStatus() {
	f.refreshMu.Lock()
	defer f.refreshMu.Unlock()
	st := Status{}
	var caps []string
	owner, err := f.owner()
	if err != nil {
		st.Problem = "No notification service is running on this desktop, so Yett shows its window when an agent asks."
	} else {
		ctx, cancel := f.ctx()
		obj := f.conn.Object(owner, fdoPath)
		err := obj.CallWithContext(ctx, fdoInterface+".GetCapabilities", 0).Store(&caps)
		var name, vendor, version, spec string
		if obj.CallWithContext(ctx, fdoInterface+".GetServerInformation", 0).Store(&name, &vendor, &version, &spec) == nil {
			st.Server = strings.TrimSpace(name + " " + version)
		}
		st.Owner = Server{Name: owner, Product: st.Server}
		var pid uint32
		if f.conn.BusObject().CallWithContext(ctx, busName+".GetConnectionUnixProcessID", 0, owner).Store(&pid) == nil {
			if p, err := procid.Describe(int(pid)); err == nil {
				st.Owner.Process = p
			} else {
				f.opts.Logger.Warn("notify: the notification server's process could not be inspected", "pid", pid, "err", err)
			}
		}
		cancel()
		switch {
		case err != nil:
			st.Problem = "The notification service did not answer, so Yett shows its window when an agent asks."
		case !slices.Contains(caps, "actions"):
			st.Available = true
			st.Problem = "This desktop's notifications cannot carry buttons, so they only say an agent is waiting; Yett also shows its window with the card."
		default:
			st.Available, st.Actions = true, true
		}
	}
	f.mu.Lock()
	f.status, f.caps = st, caps
	f.mu.Unlock()
}

// server is the owner as last inspected, if it still is name.
func (f *freedesktop) server(name string) Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status.Owner.Name == name {
		return f.status.Owner
	}
	return Server{Name: name}
}

func (f *freedesktop) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func newNonce() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Show sends Notify to the owner of the service by its unique name, so the
// id it returns is known to belong to that very server.
func (f *freedesktop) Show(n Notification) error {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return errors.New("notify: closed")
	}
	st, caps := f.status, f.caps
	prev := f.byCard[n.Card]
	f.mu.Unlock()
	if !st.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, st.Problem)
	}
	owner, err := f.owner()
	if err != nil {
		return fmt.Errorf("%w: no notification service", ErrUnavailable)
	}
	var replaces uint32
	nonce := newNonce()
	if prev != nil && prev.owner == owner {
		replaces, nonce = prev.id, prev.nonce
	}
	var actions []string
	if st.Actions {
		actions = []string{defaultAction, "Open Yett"}
		// Approve and Deny go only to the server the caller trusted; one
		// that took the name since gets "open Yett".
		if n.Answerable && (n.Server == "" || n.Server == owner) {
			actions = append(actions, "approve-"+nonce, "Approve", "deny-"+nonce, "Deny")
		}
	}
	markup := slices.Contains(caps, "body-markup")
	hints := map[string]dbus.Variant{
		"urgency":       dbus.MakeVariant(urgencyNormal),
		"category":      dbus.MakeVariant(category),
		"desktop-entry": dbus.MakeVariant("yett"),
	}
	timeout := int32(-1)
	if !n.Expires.IsZero() {
		timeout = int32(max(time.Until(n.Expires), time.Second) / time.Millisecond)
	}
	ctx, cancel := f.ctx()
	defer cancel()
	var id uint32
	err = f.conn.Object(owner, fdoPath).CallWithContext(ctx, fdoInterface+".Notify", 0,
		f.opts.AppName, replaces, f.opts.Icon, plain(n.Title), bodyText(n.Body, markup), actions, hints, timeout).Store(&id)
	if err != nil {
		return fmt.Errorf("notify: the notification service refused the notification: %w", err)
	}
	s := &shown{card: n.Card, id: id, owner: owner, nonce: nonce}
	f.mu.Lock()
	if prev != nil && prev != s {
		delete(f.byID, prev.id)
		if prev.nonce != nonce {
			f.retireLocked(prev)
		}
	}
	f.byCard[n.Card], f.byID[id] = s, s
	f.mu.Unlock()
	return nil
}

func (f *freedesktop) Withdraw(card string) error {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	f.mu.Lock()
	s := f.byCard[card]
	if s != nil {
		f.forgetLocked(s)
	}
	f.mu.Unlock()
	if s == nil {
		return nil
	}
	ctx, cancel := f.ctx()
	defer cancel()
	return f.conn.Object(s.owner, fdoPath).CallWithContext(ctx, fdoInterface+".CloseNotification", 0, s.id).Err
}

// forgetLocked drops s, remembering its nonce: a click that raced the
// withdrawal is then told the card is gone. f.mu held.
func (f *freedesktop) forgetLocked(s *shown) {
	if f.byCard[s.card] == s {
		delete(f.byCard, s.card)
	}
	if f.byID[s.id] == s {
		delete(f.byID, s.id)
	}
	f.retireLocked(s)
}

func (f *freedesktop) retireLocked(s *shown) {
	if _, ok := f.retired[s.nonce]; ok {
		return
	}
	f.retired[s.nonce] = s.card
	f.order = append(f.order, s.nonce)
	if len(f.order) > maxRetired {
		delete(f.retired, f.order[0])
		f.order = f.order[1:]
	}
}

func (f *freedesktop) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	cards := make([]string, 0, len(f.byCard))
	for c := range f.byCard {
		cards = append(cards, c)
	}
	f.mu.Unlock()
	for _, c := range cards {
		f.mu.Lock()
		s := f.byCard[c]
		f.mu.Unlock()
		if s != nil {
			f.callMu.Lock()
			ctx, cancel := f.ctx()
			f.conn.Object(s.owner, fdoPath).CallWithContext(ctx, fdoInterface+".CloseNotification", 0, s.id)
			cancel()
			f.callMu.Unlock()
		}
	}
	err := f.conn.Close()
	<-f.done
	return err
}

// loop handles the signals until the connection closes.
func (f *freedesktop) loop(ch <-chan *dbus.Signal) {
	defer close(f.done)
	for sig := range ch {
		switch sig.Name {
		case fdoInterface + ".ActionInvoked":
			f.actionInvoked(sig)
		case fdoInterface + ".NotificationClosed":
			f.notificationClosed(sig)
		case busName + ".NameOwnerChanged":
			if sig.Sender == busName && len(sig.Body) == 3 && sig.Body[0] == fdoName {
				f.serverChanged()
			}
		}
	}
}

// actionInvoked believes an answer only from the server that showed the
// notification, for the id it returned, with the notification's nonce.
func (f *freedesktop) actionInvoked(sig *dbus.Signal) {
	var id uint32
	var key string
	if len(sig.Body) != 2 || dbus.Store(sig.Body, &id, &key) != nil {
		f.reject(Rejected{Sender: sig.Sender, Action: "(malformed)", Why: "an ActionInvoked signal that is not (id, action)"})
		return
	}
	key = clip(key)
	owner, err := f.owner()
	f.mu.Lock()
	s := f.byID[id]
	card := ""
	if s != nil {
		card = s.card
	}
	retiredCard, isRetired := "", false
	if a, nonce, ok := strings.Cut(key, "-"); ok && (a == "approve" || a == "deny") {
		retiredCard, isRetired = f.retired[nonce]
	}
	f.mu.Unlock()
	switch {
	case err != nil || sig.Sender != owner:
		f.reject(Rejected{Card: card, Action: key, Sender: sig.Sender, NotificationID: id,
			Why: fmt.Sprintf("sent by %s, which does not own %s (%s does)", sig.Sender, fdoName, orNone(owner))})
	case s == nil && isRetired:
		// A click on a notification Yett had just withdrawn: the card is
		// gone, and the person is told so.
		f.respond(Response{Card: retiredCard, Action: Action(strings.SplitN(key, "-", 2)[0]), Server: f.server(owner)})
	case s == nil:
		// Another application's notification: not Yett's business.
	case s.owner != sig.Sender:
		f.reject(Rejected{Card: card, Action: key, Sender: sig.Sender, NotificationID: id,
			Why: "the id belongs to a notification an earlier notification server showed"})
	case key == defaultAction:
		f.respond(Response{Card: card, Action: ActionOpen, Server: f.server(owner)})
	case key == "approve-"+s.nonce:
		f.respond(Response{Card: card, Action: ActionApprove, Server: f.server(owner)})
	case key == "deny-"+s.nonce:
		f.respond(Response{Card: card, Action: ActionDeny, Server: f.server(owner)})
	default:
		f.reject(Rejected{Card: card, Action: key, Sender: sig.Sender, NotificationID: id,
			Why: "the action is not one Yett offered on that notification"})
	}
}

func (f *freedesktop) notificationClosed(sig *dbus.Signal) {
	var id, reason uint32
	if len(sig.Body) < 1 || dbus.Store(sig.Body[:1], &id) != nil {
		return
	}
	_ = reason
	f.mu.Lock()
	if s := f.byID[id]; s != nil && s.owner == sig.Sender {
		f.forgetLocked(s)
	}
	f.mu.Unlock()
}

func (f *freedesktop) serverChanged() {
	f.mu.Lock()
	for _, s := range f.byCard {
		f.retireLocked(s)
	}
	f.byCard, f.byID = map[string]*shown{}, map[uint32]*shown{}
	f.mu.Unlock()
	f.refreshStatus()
	if f.h.ServerChanged != nil {
		f.h.ServerChanged()
	}
}

func (f *freedesktop) respond(r Response) {
	if f.h.Respond != nil {
		f.h.Respond(r)
	}
}

func (f *freedesktop) reject(r Rejected) {
	if f.h.Reject != nil {
		f.h.Reject(r)
	}
}

func orNone(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

// plain neutralises markup characters in text the server might parse as
// markup whether or not it says so (dunst does by default): a process
// name is chosen by whoever started the process, and must not become a
// link or hide the rest of the text.
func plain(s string) string {
	return strings.NewReplacer("<", "‹", ">", "›", "&", "＆").Replace(s)
}

// bodyText escapes the body for a server that declares body markup, and
// neutralises it for one that does not.
func bodyText(s string, markup bool) string {
	if markup {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	}
	return plain(s)
}
