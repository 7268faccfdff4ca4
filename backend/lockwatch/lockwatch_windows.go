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
// Go from OS threads. windows.NewCallback slots are never freed, so each
// callback is created once per process and finds its watcher through these
// registries.
var (
	registryMu sync.RWMutex
	byPowerID  = map[uintptr]*Watcher{}
	byWindow   = map[uintptr]*Watcher{}
	lastID     uintptr
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

	registryMu.Lock()
	lastID++
	id := lastID
	byPowerID[id] = w
	registryMu.Unlock()

	params := &deviceNotifySubscribeParameters{callback: powerCallbackPtr, context: id}
	var handle uintptr
	r, _, _ := procPowerRegisterSuspendResumeNotification.Call(deviceNotifyCallback,
		uintptr(unsafe.Pointer(params)), uintptr(unsafe.Pointer(&handle)))
	if r != 0 {
		registryMu.Lock()
		delete(byPowerID, id)
		registryMu.Unlock()
		return fmt.Errorf("PowerRegisterSuspendResumeNotification: %w", windows.Errno(r))
	}
	src := Source("windows:PBT_APMSUSPEND")
	w.addSources(src)
	w.goWatch(func() {
		<-ctx.Done()
		procPowerUnregisterSuspendResumeNotification.Call(handle)
		// Taking the write lock waits out a callback still calling onLock,
		// so none runs after Wait returns.
		registryMu.Lock()
		delete(byPowerID, id)
		registryMu.Unlock()
		w.dropSources(src)
		_ = params // kept reachable until unregistered
	})
	return nil
}

// powerCallback is DeviceNotifyCallbackRoutine, run on a system thread.
// Holding the read lock through onLock lets the suspend wait for the vault
// to lock, which is the point.
func powerCallback(id, typ, setting uintptr) uintptr {
	registryMu.RLock()
	defer registryMu.RUnlock()
	w := byPowerID[id]
	if w == nil {
		return 0
	}
	if typ == pbtAPMSuspend {
		w.handle("PBT_APMSUSPEND", Sleep)
	}
	return 0
}
