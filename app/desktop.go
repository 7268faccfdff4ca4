package app

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/menu/keys"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/notify"
)

// Yett lives in the background: closing the window hides it while the
// gateway keeps serving agents (the vault keeps its lock rules), and only
// an explicit quit (the menu, Settings, `yett quit`, a signal) stops it.
// A card that needs the person brings the window back with that card in
// view: a notification clicked, a notification that cannot be shown, a
// second launch.

// Events the desktop sends the UI.
const (
	// EventShowCard asks the UI to bring a card into view: {"id": card}
	// ("" for the oldest waiting).
	EventShowCard = "app:show-card"
	// EventCloseRequested: the window was closed for the first time; the
	// UI says Yett keeps running and asks whether to keep it so.
	EventCloseRequested = "app:close-requested"
)

// ShowCard is EventShowCard's payload: the card to bring into view.
type ShowCard struct {
	ID string `json:"id"`
}

// desktopPrefsFile holds the desktop app's own small preferences (not
// security relevant: what the person has been told).
const desktopPrefsFile = "desktop.json"

type desktopPrefs struct {
	// BackgroundNoticeSeen: the person was told, at a first close, that
	// Yett keeps running, and chose to keep it so.
	BackgroundNoticeSeen bool `json:"background_notice_seen"`
}

// desktop is the App's window life: hidden or shown, quitting or not.
type desktop struct {
	mu          sync.Mutex
	prefs       desktopPrefs
	prefsPath   string
	quitting    bool
	noticeShown bool   // the first-close notice is on screen
	pending     string // a card to show once the window exists ("" none)
	raiseQueued bool
	title       string
	quitSignal  chan struct{}
}

func (a *App) loadDesktopPrefs() {
	d := &a.desk
	d.prefsPath = filepath.Join(a.cfg.DataDir, desktopPrefsFile)
	d.quitSignal = make(chan struct{})
	if b, err := os.ReadFile(d.prefsPath); err == nil {
		json.Unmarshal(b, &d.prefs)
	}
}

func (a *App) saveDesktopPrefs(p desktopPrefs) {
	b, _ := json.Marshal(p)
	tmp := a.desk.prefsPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err == nil {
		if err := os.Rename(tmp, a.desk.prefsPath); err != nil {
			a.cfg.Log.Warn("saving desktop preferences", "err", err)
		}
	}
}

// appMenu is the window's menu: the explicit way to quit.
func (a *App) appMenu() *menu.Menu {
	m := menu.NewMenu()
	sub := m.AddSubmenu("Yett")
	sub.AddText("Show waiting approvals", keys.CmdOrCtrl("j"), func(*menu.CallbackData) { a.raise("") })
	sub.AddSeparator()
	sub.AddText("Quit Yett", keys.CmdOrCtrl("q"), func(*menu.CallbackData) { a.quit() })
	return m
}

// watchSignals quits on SIGINT and SIGTERM. Wails quits on them too, through
// the same path as the window's close button; the flag set here first makes
// that path quit instead of hide.
func (a *App) watchSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		a.quit()
	}()
}

// quit stops Yett: the vault locks (recorded), waiting agents are refused,
// the gateway stops.
func (a *App) quit() {
	a.desk.mu.Lock()
	already := a.desk.quitting
	a.desk.quitting = true
	a.desk.mu.Unlock()
	if !already {
		close(a.desk.quitSignal)
	}
	if ctx := a.wailsContext(); ctx != nil {
		runtime.Quit(ctx)
	}
}

func (a *App) wailsContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ctx
}

// beforeClose decides what closing the window does: quit when quitting was
// asked for, otherwise hide, after telling the person the first time.
func (a *App) beforeClose(ctx context.Context) (prevent bool) {
	// A signal reaches Wails' own handler and ours at once; give ours the
	// moment it needs to say this close is a quit.
	select {
	case <-a.desk.quitSignal:
		return false
	case <-time.After(50 * time.Millisecond):
	}
	d := &a.desk
	d.mu.Lock()
	if d.quitting {
		d.mu.Unlock()
		return false
	}
	first := !d.prefs.BackgroundNoticeSeen && !d.noticeShown
	if first {
		d.noticeShown = true
	}
	d.mu.Unlock()
	if first {
		// The window stays until the person chose; closing it again while
		// the notice shows is the choice to keep Yett running.
		a.events.send(EventCloseRequested, struct{}{})
		return true
	}
	a.keepInBackground()
	return true
}

// keepInBackground hides the window and remembers the person knows Yett
// keeps running.
func (a *App) keepInBackground() {
	d := &a.desk
	d.mu.Lock()
	changed := !d.prefs.BackgroundNoticeSeen
	d.prefs.BackgroundNoticeSeen, d.noticeShown = true, false
	p := d.prefs
	d.mu.Unlock()
	if changed {
		a.saveDesktopPrefs(p)
	}
	if ctx := a.wailsContext(); ctx != nil {
		runtime.WindowHide(ctx)
	}
	a.cfg.Log.Info("window hidden; Yett keeps serving agents in the background")
}

// raise brings the window forward with card in view ("" the oldest
// waiting card, or none). Before the window exists it is done at startup.
func (a *App) raise(card string) {
	ctx := a.wailsContext()
	if ctx == nil {
		a.desk.mu.Lock()
		a.desk.pending, a.desk.raiseQueued = card, true
		a.desk.mu.Unlock()
		return
	}
	runtime.WindowUnminimise(ctx)
	runtime.WindowShow(ctx)
	if card == "" {
		if b := a.Approvals.current(); b != nil {
			if p := b.Pending(); len(p) > 0 {
				card = p[0].ID
			}
		}
	}
	a.events.send(EventShowCard, ShowCard{ID: card})
}

// raiseQueued shows what asked for the window before it existed.
func (a *App) raiseQueuedAtStartup() {
	a.desk.mu.Lock()
	card, queued := a.desk.pending, a.desk.raiseQueued
	a.desk.raiseQueued = false
	a.desk.mu.Unlock()
	if queued {
		a.raise(card)
	}
}

// setWaiting puts the number of waiting cards in the window's title, as
// the badge the taskbar and window switcher show.
func (a *App) setWaiting(n int) {
	title := "Yett"
	if n == 1 {
		title = "Yett (1 waiting)"
	} else if n > 1 {
		title = "Yett (" + strconv.Itoa(n) + " waiting)"
	}
	a.desk.mu.Lock()
	same := a.desk.title == title
	a.desk.title = title
	a.desk.mu.Unlock()
	if ctx := a.wailsContext(); ctx != nil && !same {
		runtime.WindowSetTitle(ctx, title)
	}
}

// openNotifications is how the keeper reaches this desktop's
// notifications.
func openNotifications(h notify.Handlers) (notify.Notifier, error) {
	return notify.Open(h, notify.Options{AppName: "Yett", Icon: "yett"})
}

// approvalOperationRef is the card ref of a named operation.
func approvalOperationRef(name string) string { return approval.OperationRef(name) }
