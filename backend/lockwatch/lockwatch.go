// Package lockwatch tells the vault when to lock because the machine is about
// to sleep or the user's screen locks.
//
// It only ever asks for a lock. Nothing it hears from the operating system can
// unlock the vault or restore an approval: there is no unlock path in this
// package at all.
//
// # Sources per OS
//
// Linux, over D-Bus (github.com/godbus/dbus/v5):
//   - system bus: logind's org.freedesktop.login1.Manager.PrepareForSleep(true)
//     means [Sleep]; the Lock signal and a LockedHint=true property change on
//     the caller's own logind session mean [ScreenLocked];
//   - session bus: ActiveChanged(true) on org.freedesktop.ScreenSaver,
//     org.gnome.ScreenSaver, org.mate.ScreenSaver, org.cinnamon.ScreenSaver
//     and org.xfce.ScreenSaver means [ScreenLocked]. Some screensavers report
//     a blanked (not yet locked) screen the same way; locking then is early,
//     never late.
//
// macOS (cgo builds only): NSWorkspaceWillSleepNotification means [Sleep];
// the com.apple.screenIsLocked distributed notification and
// NSWorkspaceSessionDidResignActiveNotification (fast user switching) mean
// [ScreenLocked]. AppKit delivers them through the main thread's run loop,
// which the desktop app runs; a headless process without one hears nothing.
// Without cgo, [Start] fails with [ErrNoSource].
//
// Windows (pure Go): PowerRegisterSuspendResumeNotification delivering
// PBT_APMSUSPEND means [Sleep]; WTSRegisterSessionNotification on a
// message-only window delivering WTS_SESSION_LOCK, WTS_CONSOLE_DISCONNECT
// (switching users) or WTS_REMOTE_DISCONNECT means [ScreenLocked]. Both work
// without any visible window, so a headless gateway hears them too.
//
// A missing bus or service is normal (a server has no session bus, a
// container has no logind): that source is skipped and logged, the others are
// watched. [Start] fails with [ErrNoSource] only when nothing at all can be
// watched. A source whose connection drops (the bus daemon restarts) is not
// reconnected; it disappears from [Watcher.Sources] and a warning is logged,
// so a status view can show that auto-lock on that event is off.
//
// # Trust
//
// These events are not authenticated, and need not be. Any process on the
// session bus can emit ActiveChanged(true); any process on the system bus
// can send a signal addressed to us; any macOS process can post
// com.apple.screenIsLocked; a process on the same Windows desktop can post
// to our message-only window. The worst a forgery can do is lock the vault
// one extra time, which is the safe direction, and no event can unlock or
// keep the vault from locking: signals saying the opposite
// (ActiveChanged(false), PrepareForSleep(false), Unlock, LockedHint=false)
// are ignored, not acted upon. The logind subscriptions still ask the bus
// only for signals whose sender owns org.freedesktop.login1, which keeps
// broadcast forgeries on the system bus from causing spurious locks.
package lockwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Reason says why a lock was asked for.
type Reason string

const (
	// Sleep: the machine is about to suspend or hibernate.
	Sleep Reason = "sleep"
	// ScreenLocked: the user's screen locked (or a screensaver started).
	ScreenLocked Reason = "screen_locked"
)

// Source names one event being watched, such as "logind:PrepareForSleep" or
// "org.gnome.ScreenSaver:ActiveChanged". It is meant for logs and status
// views, not for branching.
type Source string

// ErrNoSource is returned by [Start] and [Watch] when no source at all could
// be watched: the wrapped message says why for each one.
var ErrNoSource = errors.New("lockwatch: no sleep or screen-lock source available")

// Options tune a [Watcher]. The zero value watches the usual places.
type Options struct {
	// Logger receives which sources are watched, which are not and why, and
	// every lock asked for. Nil means slog.Default().
	Logger *slog.Logger

	// SystemBusAddress and SessionBusAddress (Linux only) are D-Bus
	// addresses such as "unix:path=/run/dbus/system_bus_socket". Empty means
	// the usual discovery: DBUS_SYSTEM_BUS_ADDRESS or the standard socket,
	// DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus. A session bus is never
	// auto-launched.
	SystemBusAddress  string
	SessionBusAddress string

	// ConnectTimeout bounds connecting to each bus and each setup call, so a
	// wedged daemon cannot stall startup. Zero means 5 s.
	ConnectTimeout time.Duration

	// observe, set only by tests, sees every event delivered to a watcher
	// after it has been handled (and onLock has returned if it fired).
	observe func(event string, fired bool)
}

// Watcher watches the sources [Start] found. Its methods are safe for
// concurrent use.
type Watcher struct {
	ctx    context.Context
	log    *slog.Logger
	opts   Options
	onLock func(Reason)

	fireMu sync.Mutex // serializes onLock calls
	wg     sync.WaitGroup

	mu      sync.Mutex
	sources []Source
}

// Start subscribes to every source available on this machine and returns
// once they are in place, so an event after Start returns is not missed.
// onLock is called for each lock event, never concurrently with itself and
// never after [Watcher.Wait] returns. It should return promptly: it may run
// on an OS callback thread (on Windows the suspend waits for it, on macOS
// it is the main thread), and signals queue up while it runs.
// Watching stops when ctx is done.
//
// Start returns an error wrapping [ErrNoSource] if nothing could be watched,
// or wrapping ctx's error if ctx ended before Start was done.
func Start(ctx context.Context, onLock func(Reason), opts Options) (*Watcher, error) {
	if onLock == nil {
		return nil, errors.New("lockwatch: onLock is nil")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 5 * time.Second
	}
	w := &Watcher{ctx: ctx, log: opts.Logger, opts: opts, onLock: onLock}
	err := w.startOS(ctx)
	if ctx.Err() != nil {
		// Cancelled while connecting: the sources that did start are
		// stopping, and their failures say nothing about the system.
		w.wg.Wait()
		return nil, fmt.Errorf("lockwatch: %w", context.Cause(ctx))
	}
	if len(w.Sources()) == 0 {
		// No goroutine is started for a connection without a subscribed
		// source, and one whose sources were all lost has returned or is
		// returning: this wait is short and keeps Start leak-free.
		w.wg.Wait()
		if err == nil {
			err = errors.New("nothing to watch on this system")
		}
		return nil, fmt.Errorf("%w: %w", ErrNoSource, err)
	}
	w.log.Info("lockwatch: auto-lock sources", "sources", w.Sources())
	return w, nil
}

// Watch is [Start] followed by [Watcher.Wait]: it blocks until ctx is done
// and returns an error only if no source could be watched (wrapping
// [ErrNoSource]). Being cancelled is not an error.
func Watch(ctx context.Context, onLock func(Reason), opts Options) error {
	w, err := Start(ctx, onLock, opts)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	w.Wait()
	return nil
}

// Sources returns the sources being watched now. A source whose connection
// was lost is no longer listed.
func (w *Watcher) Sources() []Source {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.sources)
}

// Wait blocks until the context given to [Start] is done and every goroutine
// of the watcher has returned.
func (w *Watcher) Wait() {
	<-w.ctx.Done()
	w.wg.Wait()
}

// addSources records sources that are now subscribed.
func (w *Watcher) addSources(s ...Source) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sources = append(w.sources, s...)
}

// dropSources forgets sources whose connection ended; if ctx is still live,
// this is a loss worth a warning because auto-lock on them is now off.
func (w *Watcher) dropSources(s ...Source) {
	w.mu.Lock()
	w.sources = slices.DeleteFunc(w.sources, func(x Source) bool { return slices.Contains(s, x) })
	w.mu.Unlock()
	if w.ctx.Err() == nil {
		w.log.Warn("lockwatch: source lost, not reconnecting", "sources", s)
	}
}

// handle reports one delivered event; reason is empty when the event does
// not ask for a lock.
func (w *Watcher) handle(event string, reason Reason) {
	fired := reason != ""
	if fired {
		w.fireMu.Lock()
		w.log.Info("lockwatch: lock requested", "reason", string(reason), "event", event)
		w.onLock(reason)
		w.fireMu.Unlock()
	}
	if w.opts.observe != nil {
		w.opts.observe(event, fired)
	}
}

// goWatch runs f on a goroutine that Wait waits for.
func (w *Watcher) goWatch(f func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
	}()
}
