package app

/*
#cgo LDFLAGS: -framework Foundation
void yettTrayDispatchStart(void);
*/
import "C"

import (
	"log/slog"
	"sync/atomic"

	"fyne.io/systray"

	"github.com/yettdev/yett/build/icons"
)

// On macOS Wails owns NSApplication: its delegate, its main menu and the
// run loop on the main thread. systray's RunWithExternalLoop leaves all
// three to Wails (it sets no delegate of its own) and only needs its start
// to run on the main thread, where it makes the NSStatusItem; every later
// change it makes goes to the main thread by itself. So the start is
// dispatched to the main queue (tray_darwin.c), which Wails' run loop
// serves. Its end, and systray.Quit, would stop NSApplication's run loop,
// Wails' own: they are never called, and the icon goes with the process.
//
// This file and tray_darwin.c cannot be built on Linux (cgo for darwin
// needs a Mac); they are written against systray v1.12.2's
// systray_darwin.m and Wails v2.9.2's darwin frontend, and have not run.

var trayStart atomic.Pointer[func()]

func trayAvailable(*slog.Logger) error { return nil }

func runSystray(onReady func()) (stop func()) {
	start, _ := systray.RunWithExternalLoop(onReady, nil)
	trayStart.Store(&start)
	C.yettTrayDispatchStart()
	return func() {}
}

//export yettTrayStartOnMain
func yettTrayStartOnMain() {
	if start := trayStart.Load(); start != nil {
		(*start)()
	}
}

// The menu bar takes a 16-point image: 32 pixels for a Retina screen.
func setTrayImage() { systray.SetIcon(icons.PNG(32)) }

// macOS menus have no mnemonic marker.
func menuText(s string) string { return s }
