package lockwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no bus: the power callback and the session window call into
// Go from OS threads and find their watcher through these.
var (
	powerWatchers  callbacks // by registration id
	windowWatchers callbacks // by window handle
)

// startOS registers for suspend and for session lock. Each runs until ctx
// is done; either may fail alone.
func (w *Watcher) startOS(ctx context.Context) error {
	var errs []error
	if err := w.watchSuspend(ctx); err != nil {
		w.log.Info("lockwatch: source unavailable", "err", err)
		errs = append(errs, err)
	}
	if err := w.watchSessionLock(ctx); err != nil {
		w.log.Info("lockwatch: source unavailable", "err", err)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

var (
	powrprof                                     = windows.NewLazySystemDLL("powrprof.dll")
	procPowerRegisterSuspendResumeNotification   = powrprof.NewProc("PowerRegisterSuspendResumeNotification")
	procPowerUnregisterSuspendResumeNotification = powrprof.NewProc("PowerUnregisterSuspendResumeNotification")

	powerCallbackOnce sync.Once
	powerCallbackPtr  uintptr
)

const (
	deviceNotifyCallback = 2   // DEVICE_NOTIFY_CALLBACK
	pbtAPMSuspend        = 0x4 // PBT_APMSUSPEND
)

// deviceNotifySubscribeParameters is DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS.
type deviceNotifySubscribeParameters struct {
	callback uintptr
	context  uintptr
}

// watchSuspend uses PowerRegisterSuspendResumeNotification rather than
// WM_POWERBROADCAST because message-only windows never get broadcasts and a
// headless gateway has no other window.
func (w *Watcher) watchSuspend(ctx context.Context) error {
	if err := procPowerRegisterSuspendResumeNotification.Find(); err != nil {
		return fmt.Errorf("suspend notification: %w", err)
	}
	powerCallbackOnce.Do(func() { powerCallbackPtr = windows.NewCallback(powerCallback) })

	id := powerWatchers.add(w)
	params := &deviceNotifySubscribeParameters{callback: powerCallbackPtr, context: id}
	var handle uintptr
	r, _, _ := procPowerRegisterSuspendResumeNotification.Call(deviceNotifyCallback,
		uintptr(unsafe.Pointer(params)), uintptr(unsafe.Pointer(&handle)))
	if r != 0 {
		powerWatchers.remove(id)
		return fmt.Errorf("PowerRegisterSuspendResumeNotification: %w", windows.Errno(r))
	}
	src := Source("windows:PBT_APMSUSPEND")
	w.addSources(src)
	w.goWatch(func() {
		<-ctx.Done()
		procPowerUnregisterSuspendResumeNotification.Call(handle)
		// Waits out a callback still calling onLock, so none runs after
		// Wait returns.
		powerWatchers.remove(id)
		w.dropSources(src)
		_ = params // kept reachable until unregistered
	})
	return nil
}

// powerCallback is DeviceNotifyCallbackRoutine, run on a system thread.
// Windows waits for it to return before suspending, so the vault is locked
// before the machine sleeps.
func powerCallback(id, typ, setting uintptr) uintptr {
	if typ == pbtAPMSuspend {
		powerWatchers.with(id, func(w *Watcher) { w.handle("PBT_APMSUSPEND", Sleep) })
	}
	return 0
}
