//go:build windows

package lockwatch

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestSessionLockOnWindows: Start subscribes a message-only window to
// session changes; a WM_WTSSESSION_CHANGE that says the session locked
// reaches onLock as ScreenLocked through the window's own message loop,
// another code does not, and cancelling stops the source and the loop.
// (That Windows sends the message when the person locks the screen needs
// Windows: docs/windows.md.)
func TestSessionLockOnWindows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	locks := make(chan Reason, 4)
	w, err := Start(ctx, func(r Reason) { locks <- r }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const src = Source("windows:WTS_SESSION_LOCK")
	if !slices.Contains(w.Sources(), src) {
		t.Fatalf("sources %v, want %s", w.Sources(), src)
	}
	var hwnd uintptr
	windowWatchers.mu.RLock()
	for id, ww := range windowWatchers.m {
		if ww == w {
			hwnd = id
		}
	}
	windowWatchers.mu.RUnlock()
	if hwnd == 0 {
		t.Fatal("no session window for the watcher")
	}
	const wtsSessionUnlock = 0x8
	procPostMessageW.Call(hwnd, wmWTSSessionChange, wtsSessionUnlock, 0)
	procPostMessageW.Call(hwnd, wmWTSSessionChange, wtsSessionLock, 0)
	select {
	case r := <-locks:
		if r != ScreenLocked {
			t.Fatalf("onLock(%q), want %q", r, ScreenLocked)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session lock did not reach onLock")
	}
	select {
	case r := <-locks:
		t.Fatalf("a second lock (%q) for one lock message", r)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	done := make(chan struct{})
	go func() { w.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop")
	}
	if slices.Contains(w.Sources(), src) {
		t.Fatal("the session source outlived its watcher")
	}
}
