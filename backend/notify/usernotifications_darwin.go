//go:build darwin && cgo

package notify

/*
#cgo LDFLAGS: -framework Foundation -framework UserNotifications
#include <stdint.h>
#include <stdbool.h>
void free(void *);
int yettNotifyStart(uintptr_t ident);
int yettNotifyAuthorization(void);
void yettNotifyShow(const char *identifier, const char *title, const char *body, bool answerable);
void yettNotifyRemove(const char *identifier);
void yettNotifyStop(void);
*/
import "C"

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// macOS notifications through UNUserNotificationCenter
// (usernotifications_darwin.m). The system delivers a response only for a
// notification this app posted, to this app's delegate; the identifier
// Yett posts it under carries the card's one-time nonce, and a response is
// believed only for an identifier Yett shows. Approve is a foreground
// action that asks for the Mac to be unlocked, Deny is destructive; a card
// the policy keeps in the window gets a category without actions.
//
// UNUserNotificationCenter works only for a process running from an app
// bundle with a bundle identifier (Yett.app): run bare, Open reports
// notifications unavailable rather than let the framework abort.

// Start's results (usernotifications_darwin.m).
const (
	darwinStarted  = 0
	darwinNoBundle = 1
)

// Authorization states (usernotifications_darwin.m).
const (
	darwinAuthUnknown = 0
	darwinAuthAllowed = 1
	darwinAuthDenied  = 2
)

// darwinCenter is the process's one notifier: the framework has one
// delegate per process.
var darwinCenter struct {
	mu sync.Mutex
	un *userNotifications
}

type userNotifications struct {
	h    Handlers
	opts Options

	mu     sync.Mutex
	shown  map[string]string // identifier -> card
	byCard map[string]string // card -> identifier
	closed bool
}

// Open registers Yett's notification categories and asks the person's
// permission (the first time, macOS asks them).
func Open(h Handlers, opts Options) (Notifier, error) {
	opts.defaults()
	darwinCenter.mu.Lock()
	defer darwinCenter.mu.Unlock()
	if darwinCenter.un != nil {
		return nil, errors.New("notify: already open in this process")
	}
	u := &userNotifications{h: h, opts: opts, shown: map[string]string{}, byCard: map[string]string{}}
	switch C.yettNotifyStart(0) {
	case darwinStarted:
	case darwinNoBundle:
		return nil, fmt.Errorf("%w: Yett is not running from its app bundle (Yett.app), which macOS requires for notifications", ErrUnavailable)
	default:
		return nil, fmt.Errorf("%w: the notification center could not start", ErrUnavailable)
	}
	darwinCenter.un = u
	return u, nil
}

func (u *userNotifications) Status() Status {
	st := Status{Server: "macOS Notification Center"}
	switch C.yettNotifyAuthorization() {
	case darwinAuthAllowed:
		st.Available, st.Actions = true, true
	case darwinAuthDenied:
		st.Problem = "Notifications for Yett are not allowed in System Settings (Notifications), so Yett shows its window when an agent asks."
	default:
		st.Problem = "macOS has not yet said whether Yett may show notifications; until it does, Yett shows its window when an agent asks."
	}
	return st
}

func (u *userNotifications) Show(n Notification) error {
	if st := u.Status(); !st.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, st.Problem)
	}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return errors.New("notify: closed")
	}
	id, ok := u.byCard[n.Card]
	if !ok {
		var b [12]byte
		rand.Read(b[:])
		id = "yett." + n.Card + "." + hex.EncodeToString(b[:])
		u.byCard[n.Card], u.shown[id] = id, n.Card
	}
	u.mu.Unlock()
	cid, ctitle, cbody := C.CString(id), C.CString(n.Title), C.CString(n.Body)
	defer C.free(unsafe.Pointer(cid))
	defer C.free(unsafe.Pointer(ctitle))
	defer C.free(unsafe.Pointer(cbody))
	// The same identifier replaces a notification already shown.
	C.yettNotifyShow(cid, ctitle, cbody, C.bool(n.Answerable))
	return nil
}

func (u *userNotifications) Withdraw(card string) error {
	u.mu.Lock()
	id, ok := u.byCard[card]
	delete(u.byCard, card)
	delete(u.shown, id)
	u.mu.Unlock()
	if !ok {
		return nil
	}
	cid := C.CString(id)
	defer C.free(unsafe.Pointer(cid))
	C.yettNotifyRemove(cid)
	return nil
}

func (u *userNotifications) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	cards := make([]string, 0, len(u.byCard))
	for c := range u.byCard {
		cards = append(cards, c)
	}
	u.mu.Unlock()
	for _, c := range cards {
		u.Withdraw(c)
	}
	C.yettNotifyStop()
	darwinCenter.mu.Lock()
	darwinCenter.un = nil
	darwinCenter.mu.Unlock()
	return nil
}

// Action identifiers (usernotifications_darwin.m).
const (
	darwinActionApprove = "dev.yett.approve"
	darwinActionDeny    = "dev.yett.deny"
	darwinActionDefault = "com.apple.UNNotificationDefaultActionIdentifier"
)

//export goYettNotifyResponse
func goYettNotifyResponse(identifier, action *C.char) {
	id, act := clip(C.GoString(identifier)), clip(C.GoString(action))
	darwinCenter.mu.Lock()
	u := darwinCenter.un
	darwinCenter.mu.Unlock()
	if u == nil {
		return
	}
	u.mu.Lock()
	card, ok := u.shown[id]
	u.mu.Unlock()
	var r Response
	switch {
	case !ok && strings.HasPrefix(id, "yett.rq-"):
		// A response to a notification Yett had withdrawn: the card is
		// gone, and the person is told so.
		parts := strings.Split(id, ".")
		if len(parts) != 3 {
			return
		}
		card = parts[1]
		fallthrough
	case ok:
		switch act {
		case darwinActionApprove:
			r = Response{Card: card, Action: ActionApprove}
		case darwinActionDeny:
			r = Response{Card: card, Action: ActionDeny}
		case darwinActionDefault:
			r = Response{Card: card, Action: ActionOpen}
		default:
			return // dismissed
		}
	default:
		return
	}
	if !ok && r.Action == ActionOpen {
		return
	}
	if u.h.Respond != nil {
		go u.h.Respond(r)
	}
}
