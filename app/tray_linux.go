package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"fyne.io/systray"

	"github.com/yettdev/yett/backend/busconn"
	_ "github.com/yettdev/yett/backend/busenv" // the library's dbus.SessionBus() must never autolaunch one
	"github.com/yettdev/yett/build/icons"
)

// trayAvailable: the icon lives on the session bus, and only on one that
// exists (busenv pins the address). A desktop without a tray host (a
// StatusNotifierWatcher: GNOME has none without the AppIndicator
// extension) is told in the log; the library registers the icon when one
// appears.
func trayAvailable(log *slog.Logger) error {
	addr, err := busconn.SessionAddress("")
	if err != nil {
		return fmt.Errorf("no tray icon: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := busconn.Dial(ctx, addr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("no tray icon: the session bus: %w", err)
	}
	defer conn.Close()
	var has bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has); err == nil && !has {
		log.Info("tray: no tray host on the session bus (StatusNotifierWatcher) yet; the icon shows when one starts")
	}
	return nil
}

// runSystray runs the library's loop on a goroutine of its own: on Linux
// that loop is only the D-Bus connection, beside Wails' GTK loop.
func runSystray(onReady func()) (stop func()) {
	// Set before the loop: the library takes the item's Id from it.
	systray.SetTitle("Yett")
	go systray.Run(onReady, nil)
	return systray.Quit
}

func setTrayImage() { systray.SetIcon(icons.PNG(64)) }

// menuText escapes dbusmenu's mnemonic marker: one '_' marks the next
// letter as the access key and is not shown, two show one.
func menuText(s string) string { return strings.ReplaceAll(s, "_", "__") }
