package lockwatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"

	"github.com/yettdev/yett/backend/busconn"
)

const (
	login1Name       = "org.freedesktop.login1"
	login1Path       = dbus.ObjectPath("/org/freedesktop/login1")
	login1Manager    = "org.freedesktop.login1.Manager"
	login1Session    = "org.freedesktop.login1.Session"
	propertiesIface  = "org.freedesktop.DBus.Properties"
	propertiesSignal = propertiesIface + ".PropertiesChanged"
)

// watchLogin1 subscribes to logind on the system bus: PrepareForSleep for
// the machine, Lock and LockedHint for our own session.
func (w *Watcher) watchLogin1(ctx context.Context) error {
	addr := busconn.SystemAddress(w.opts.SystemBusAddress)
	conn, err := busconn.Dial(ctx, addr, w.opts.ConnectTimeout)
	if err != nil {
		return fmt.Errorf("system bus: %w", err)
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)

	callCtx, cancel := context.WithTimeout(ctx, w.opts.ConnectTimeout)
	defer cancel()
	session, sessErr := ownSession(callCtx, conn)
	var dbusErr dbus.Error
	if errors.As(sessErr, &dbusErr) && (dbusErr.Name == "org.freedesktop.DBus.Error.ServiceUnknown" ||
		dbusErr.Name == "org.freedesktop.DBus.Error.NameHasNoOwner") {
		// A system bus without logind (containers, non-systemd distros)
		// would accept our subscriptions and never deliver anything.
		conn.Close()
		return fmt.Errorf("system bus: logind is not running")
	}

	var sources []Source
	var errs []error
	add := func(src Source, opts ...dbus.MatchOption) {
		opts = append(opts, dbus.WithMatchSender(login1Name))
		if err := conn.AddMatchSignalContext(callCtx, opts...); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src, err))
			return
		}
		sources = append(sources, src)
	}
	// Matching on the well-known sender makes the bus deliver only signals
	// from the current owner of org.freedesktop.login1, so a logind restart
	// is followed and a broadcast forgery is not.
	add("logind:PrepareForSleep",
		dbus.WithMatchObjectPath(login1Path),
		dbus.WithMatchInterface(login1Manager),
		dbus.WithMatchMember("PrepareForSleep"))
	if sessErr != nil {
		errs = append(errs, fmt.Errorf("logind session lock: %w", sessErr))
	} else {
		add("logind:Session.Lock",
			dbus.WithMatchObjectPath(session),
			dbus.WithMatchInterface(login1Session),
			dbus.WithMatchMember("Lock"))
		add("logind:Session.LockedHint",
			dbus.WithMatchObjectPath(session),
			dbus.WithMatchInterface(propertiesIface),
			dbus.WithMatchMember("PropertiesChanged"),
			dbus.WithMatchArg(0, login1Session))
	}
	if len(sources) == 0 {
		conn.Close()
		return errors.Join(errs...)
	}
	w.watchConn(conn, ch, sources, func(sig *dbus.Signal) Reason { return classifyLogin1(sig, session) })
	return errors.Join(errs...)
}

// ownSession asks logind which session we belong to. "auto" is logind's own
// rule: the caller's session, or else the user's graphical session, which
// is the one whose screen lock matters when we run as a user service.
func ownSession(ctx context.Context, conn *dbus.Conn) (dbus.ObjectPath, error) {
	var path dbus.ObjectPath
	err := conn.Object(login1Name, login1Path).
		CallWithContext(ctx, login1Manager+".GetSession", 0, "auto").Store(&path)
	if err != nil {
		return "", err
	}
	if !path.IsValid() || path == "/" {
		return "", fmt.Errorf("logind returned an invalid session path")
	}
	return path, nil
}

// classifyLogin1 maps a signal from the system bus connection to a reason,
// or "" when it does not ask for a lock. session is our session's object
// path ("" if unknown); signals about other sessions never count.
func classifyLogin1(sig *dbus.Signal, session dbus.ObjectPath) Reason {
	switch sig.Name {
	case login1Manager + ".PrepareForSleep":
		if sig.Path == login1Path && firstBool(sig.Body) {
			return Sleep
		}
	case login1Session + ".Lock":
		if session != "" && sig.Path == session {
			return ScreenLocked
		}
	case propertiesSignal:
		if session != "" && sig.Path == session && lockedHintSet(sig.Body) {
			return ScreenLocked
		}
	}
	return ""
}

// lockedHintSet reads PropertiesChanged(s interface, a{sv} changed, as
// invalidated) and reports whether the session's LockedHint became true.
func lockedHintSet(body []any) bool {
	if len(body) < 2 {
		return false
	}
	if iface, ok := body[0].(string); !ok || iface != login1Session {
		return false
	}
	changed, ok := body[1].(map[string]dbus.Variant)
	if !ok {
		return false
	}
	v, ok := changed["LockedHint"]
	if !ok {
		return false
	}
	b, ok := v.Value().(bool)
	return ok && b
}
