//go:build darwin && cgo

package lockwatch

/*
#cgo LDFLAGS: -framework AppKit -framework Foundation
#include <stdint.h>
void *lockwatchStart(uintptr_t ident);
void lockwatchStop(void *observer);
*/
import "C"

import (
	"context"
	"errors"
)

// Notification kinds passed from lockwatch_darwin.m.
const (
	darwinWillSleep     = 1
	darwinScreenLocked  = 2
	darwinSessionResign = 3
)

var darwinWatchers callbacks

// startOS registers one Objective-C observer for all three notifications.
// AppKit calls it on the main thread's run loop.
func (w *Watcher) startOS(ctx context.Context) error {
	id := darwinWatchers.add(w)
	obs := C.lockwatchStart(C.uintptr_t(id))
	if obs == nil {
		darwinWatchers.remove(id)
		return errors.New("could not register for workspace notifications")
	}
	sources := []Source{
		"macos:NSWorkspaceWillSleepNotification",
		"macos:com.apple.screenIsLocked",
		"macos:NSWorkspaceSessionDidResignActiveNotification",
	}
	w.addSources(sources...)
	w.goWatch(func() {
		<-ctx.Done()
		C.lockwatchStop(obs)
		// Waits out a notification still calling onLock.
		darwinWatchers.remove(id)
		w.dropSources(sources...)
	})
	return nil
}

//export goLockwatchNotify
func goLockwatchNotify(ident C.uintptr_t, kind C.int) {
	darwinWatchers.with(uintptr(ident), func(w *Watcher) {
		switch kind {
		case darwinWillSleep:
			w.handle("NSWorkspaceWillSleepNotification", Sleep)
		case darwinScreenLocked:
			w.handle("com.apple.screenIsLocked", ScreenLocked)
		case darwinSessionResign:
			w.handle("NSWorkspaceSessionDidResignActiveNotification", ScreenLocked)
		}
	})
}
