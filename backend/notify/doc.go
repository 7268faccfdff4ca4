// Package notify shows approval cards as the desktop's own notifications,
// with Approve and Deny, so a person answers an agent where they are,
// without making the approval any weaker than the window's.
//
// # One small interface, one file per OS
//
// A Notifier shows, replaces and withdraws one notification per card and
// hands answers back through Handlers. Open returns the OS's: freedesktop
// notifications over the session bus on Linux (freedesktop_linux.go),
// UNUserNotificationCenter on macOS (cgo, usernotifications_darwin.go), toast
// notifications through WinRT on Windows (toast_windows.go). Where none can
// run, Open fails with ErrUnavailable and says why.
//
// # What an answer must prove
//
// On Linux anyone on the session bus can emit an ActionInvoked signal. One
// is believed only when its sender is the unique bus name that owns
// org.freedesktop.Notifications when it arrives (the bus is asked, the
// signal is not trusted), that same name answered the Notify call for the
// card, the id is the one it returned for that card, and the action key
// carries the card's one-time nonce. Anything else that claims an answer is
// handed to Handlers.Reject (the Relay audits it as a forged answer);
// signals about other applications' notifications are ignored silently.
//
// # The Relay
//
// A Relay connects one approval.Broker to a Notifier: every pending card
// gets a notification that says what the card says (Compose: who asks, signed
// or unsigned, pid, what changed, what it wants to reach, the method and
// target of a call; never a secret or a request body), and a card that is
// answered, expires or is withdrawn loses its notification at once. Answers
// go to the broker as SurfaceNotification; the first answer wins, and the
// broker's AnswerPolicy (set from a Policy by the composition root) refuses
// cards the person reserved to the window, which then only open the card.
// When notifications cannot be shown, or cannot carry buttons, the Relay
// raises the window with the card instead.
package notify
