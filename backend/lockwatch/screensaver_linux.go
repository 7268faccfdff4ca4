package lockwatch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/yettdev/yett/backend/busconn"
)

// screenSavers are the interfaces whose ActiveChanged(true) means the screen
// locked: the freedesktop one (KDE, many others) and the desktop-specific
// ones GNOME and its descendants still use.
var screenSavers = []string{
	"org.freedesktop.ScreenSaver",
	"org.gnome.ScreenSaver",
	"org.mate.ScreenSaver",
	"org.cinnamon.ScreenSaver",
	"org.xfce.ScreenSaver",
}

// watchScreenSavers subscribes to ActiveChanged on the session bus. Paths
// differ between implementations (/ScreenSaver, /org/gnome/ScreenSaver...),
// so only interface and member are matched.
func (w *Watcher) watchScreenSavers(ctx context.Context) error {
	addr, err := busconn.SessionAddress(w.opts.SessionBusAddress)
	if err != nil {
		return err
	}
	conn, err := busconn.Dial(ctx, addr, w.opts.ConnectTimeout)
	if err != nil {
		return fmt.Errorf("session bus: %w", err)
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)

	callCtx, cancel := context.WithTimeout(ctx, w.opts.ConnectTimeout)
	defer cancel()
	var sources []Source
	var errs []error
	var running []string
	for _, iface := range screenSavers {
		src := Source(iface + ":ActiveChanged")
		if err := conn.AddMatchSignalContext(callCtx,
			dbus.WithMatchInterface(iface), dbus.WithMatchMember("ActiveChanged")); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src, err))
			continue
		}
		sources = append(sources, src)
		var has bool
		if conn.BusObject().CallWithContext(callCtx, "org.freedesktop.DBus.NameHasOwner", 0, iface).Store(&has) == nil && has {
			running = append(running, iface)
		}
	}
	if len(sources) == 0 {
		conn.Close()
		return errors.Join(errs...)
	}
	// A screensaver may start after us, so every interface stays
	// subscribed; which ones run now is only a diagnostic.
	w.log.Info("lockwatch: session bus screensavers", "running_now", running)
	w.watchConn(conn, ch, sources, classifyScreenSaver)
	return errors.Join(errs...)
}

// classifyScreenSaver maps a session bus signal to ScreenLocked when it is
// ActiveChanged(true) on a known screensaver interface.
func classifyScreenSaver(sig *dbus.Signal) Reason {
	iface, ok := strings.CutSuffix(sig.Name, ".ActiveChanged")
	if !ok {
		return ""
	}
	for _, s := range screenSavers {
		if iface == s && firstBool(sig.Body) {
			return ScreenLocked
		}
	}
	return ""
}
