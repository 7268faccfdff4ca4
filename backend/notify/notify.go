package notify

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/yettdev/yett/backend/procid"
)

// ErrUnavailable: this desktop cannot show notifications now (no server,
// no permission, no app bundle). Open wraps it with the reason.
var ErrUnavailable = errors.New("notify: notifications are unavailable")

// Notifier is one OS's notification service. Safe for concurrent use.
type Notifier interface {
	// Show shows n, or replaces the notification already shown for
	// n.Card.
	Show(n Notification) error
	// Withdraw closes the notification of card, if one is shown.
	Withdraw(card string) error
	// Status says whether notifications can be shown and answered now.
	Status() Status
	// Close withdraws every notification and stops listening.
	Close() error
}

// Notification is what one card's notification says.
type Notification struct {
	// Card is the approval request's id; the notification is withdrawn
	// and answered by it.
	Card  string
	Title string
	Body  string
	// Answerable offers Approve and Deny. Otherwise clicking the
	// notification only opens the card in the window.
	Answerable bool
	// Server is the notification server trusted to carry Approve and
	// Deny (its unique bus name). Show offers them only if that server
	// owns the service when the notification is sent: a server that took
	// the name since the caller decided gets "open Yett" only. "" where
	// the OS's own notification centre shows them (nothing to pin).
	Server string
	// Expires is when the card times out; the notification need not
	// outlive it.
	Expires time.Time
}

// Action is what the person did with a notification.
type Action string

const (
	ActionApprove Action = "approve"
	ActionDeny    Action = "deny"
	ActionOpen    Action = "open" // clicked the notification's body
)

// Response is a believed answer: the notification server reported this
// action on the notification it showed for Card.
type Response struct {
	Card   string
	Action Action
	// Server is who reported it: the owner of the service when it did.
	Server Server
}

// Rejected is something that claimed to answer a card and was not
// believed.
type Rejected struct {
	Card           string // the card it named, "" when Yett shows none by that id
	Action         string // the action it named, as sent
	Sender         string // who sent it (a D-Bus unique name)
	NotificationID uint32
	Why            string // in words, for the log
}

// Handlers receive what comes back. They run on the notifier's own
// goroutine, one at a time, and may call the Notifier.
type Handlers struct {
	Respond func(Response)
	Reject  func(Rejected)
	// ServerChanged: the notification server went away or another took
	// its place; every notification shown before is gone.
	ServerChanged func()
}

// Status is what Settings shows about notifications.
type Status struct {
	// Available: notifications can be shown now.
	Available bool
	// Actions: they carry Approve and Deny and answers come back.
	Actions bool
	// Server names the notification service ("dunst 1.9.0").
	Server string
	// Owner is the process that owns the service now, where one does
	// (freedesktop); zero where the OS shows notifications itself.
	Owner Server
	// Problem says, in words for the person, why notifications (or their
	// buttons) are not available; "" when they are.
	Problem string
}

// Server is a notification server on the session bus: the unique name
// that owns org.freedesktop.Notifications and the process behind it.
type Server struct {
	// Name is its unique bus name (":1.42"); a bus never gives one twice.
	Name string
	// Product is what it says it is ("dunst 1.9.0").
	Product string
	// Process is the connection's process as the bus reports it (zero
	// PID when the bus would not say).
	Process procid.Process
}

// String describes s for the person and the audit log.
func (s Server) String() string {
	if s.Name == "" {
		return "the system's notifications"
	}
	what := s.Product
	if what == "" {
		what = "a notification server"
	}
	if s.Process.PID == 0 {
		return fmt.Sprintf("%s (bus name %s, process unknown)", what, s.Name)
	}
	return fmt.Sprintf("%s (bus name %s, pid %d, %s)", what, s.Name, s.Process.PID, s.Process.ExePath)
}

// Options configure Open.
type Options struct {
	// AppName is the application name the notifications carry.
	AppName string
	// Icon is an icon name or absolute path (freedesktop), "" for none.
	Icon string
	// BusAddress is the session bus to use on Linux; "" finds the
	// session's own (never autolaunching one).
	BusAddress string
	// CallTimeout bounds each call to the notification server; 0 means 5 s.
	CallTimeout time.Duration
	Logger      *slog.Logger
}

func (o *Options) defaults() {
	if o.AppName == "" {
		o.AppName = "Yett"
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}
