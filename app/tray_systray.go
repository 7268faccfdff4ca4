//go:build linux || windows || darwin

package app

import (
	"log/slog"
	"sync"

	// fyne.io/systray is the tray on all three systems: on Linux a
	// StatusNotifierItem with a dbusmenu in pure Go (no GTK or
	// libappindicator to link, so it runs beside Wails' GTK loop on its own
	// D-Bus connection), on Windows a notification-area icon on a thread of
	// its own, on macOS an NSStatusItem that can leave NSApplication and
	// its delegate to Wails (RunWithExternalLoop). It is kept by the Fyne
	// project and has no dependency Yett does not already link (godbus,
	// x/sys); writing the three ourselves would be three protocols to keep.
	"fyne.io/systray"

	"github.com/yettdev/yett/backend/vault"
)

// systrayIcon is the tray icon through fyne.io/systray. The library keeps
// one tray per process in package state, so there is only ever one.
type systrayIcon struct {
	mu      sync.Mutex
	ready   bool
	closed  bool
	items   [traySlots]*systray.MenuItem
	shown   [traySlots]trayItem
	tooltip string
	pending *trayMenu
	stop    func()
}

// openTray puts Yett's icon in the tray; click hears which slot was
// clicked. An error says why there is no tray here.
func openTray(click func(slot int), log *slog.Logger) (trayIcon, error) {
	if err := trayAvailable(log); err != nil {
		return nil, err
	}
	ic := &systrayIcon{}
	ic.stop = runSystray(func() { ic.build(click) })
	return ic, nil
}

// build makes the fixed layout, every item hidden until a menu shows it.
// It runs once the library is ready (its onReady).
func (ic *systrayIcon) build(click func(slot int)) {
	setTrayImage()
	clicks := make(chan int, 16)
	layout := buildTrayMenu(nil, vault.StateUnlocked)
	ic.mu.Lock()
	defer ic.mu.Unlock()
	for slot := range traySlots {
		if layout.Items[slot].SeparatorBefore {
			systray.AddSeparator()
		}
		it := systray.AddMenuItem("", "")
		it.Hide()
		ic.items[slot] = it
		ic.shown[slot] = trayItem{Enabled: true} // the library's new item
		go forwardClicks(it.ClickedCh, slot, clicks)
	}
	go func() {
		for slot := range clicks {
			click(slot)
		}
	}()
	ic.ready = true
	if ic.pending != nil && !ic.closed {
		ic.apply(*ic.pending)
	}
}

// forwardClicks only hands a click on: the library drops a click its item's
// channel is not being read for at that moment, so the reading loop must
// never be busy with the work a click asks for.
func forwardClicks(ch <-chan struct{}, slot int, to chan<- int) {
	for range ch {
		select {
		case to <- slot:
		default: // sixteen clicks waiting: this one is too many
		}
	}
}

func (ic *systrayIcon) show(m trayMenu) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.closed {
		return
	}
	if !ic.ready {
		ic.pending = &m
		return
	}
	ic.apply(m)
}

// apply changes only what changed: every change is a signal to the tray
// host on Linux and a call to the main thread on macOS.
func (ic *systrayIcon) apply(m trayMenu) {
	if m.Tooltip != ic.tooltip {
		systray.SetTooltip(m.Tooltip)
		ic.tooltip = m.Tooltip
	}
	for slot, want := range m.Items {
		it, had := ic.items[slot], ic.shown[slot]
		if want.Label != had.Label {
			it.SetTitle(menuText(want.Label))
		}
		if want.Enabled != had.Enabled {
			if want.Enabled {
				it.Enable()
			} else {
				it.Disable()
			}
		}
		if want.Visible != had.Visible {
			if want.Visible {
				it.Show()
			} else {
				it.Hide()
			}
		}
		ic.shown[slot] = want
	}
}

func (ic *systrayIcon) close() {
	ic.mu.Lock()
	already := ic.closed
	ic.closed = true
	ic.mu.Unlock()
	if !already {
		ic.stop()
	}
}
