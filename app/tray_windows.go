package app

import (
	"log/slog"
	"runtime"
	"strings"

	"fyne.io/systray"

	"github.com/yettdev/yett/build/icons"
)

func trayAvailable(*slog.Logger) error { return nil }

// runSystray runs the library on an OS thread of its own: a window's
// messages reach only the thread that made it, so the hidden window behind
// the icon and the loop reading its messages must share one, apart from
// the thread Wails' window and loop live on.
func runSystray(onReady func()) (stop func()) {
	go func() {
		runtime.LockOSThread()
		systray.Run(onReady, nil)
	}()
	return systray.Quit
}

func setTrayImage() { systray.SetIcon(icons.ICO()) }

// menuText escapes the Windows menu's mnemonic marker: '&' underlines the
// next letter, "&&" shows one.
func menuText(s string) string { return strings.ReplaceAll(s, "&", "&&") }
