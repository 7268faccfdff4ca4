package lockwatch

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	user32               = windows.NewLazySystemDLL("user32.dll")
	procRegisterClassExW = user32.NewProc("RegisterClassExW")
	procCreateWindowExW  = user32.NewProc("CreateWindowExW")
	procDestroyWindow    = user32.NewProc("DestroyWindow")
	procDefWindowProcW   = user32.NewProc("DefWindowProcW")
	procGetMessageW      = user32.NewProc("GetMessageW")
	procDispatchMessageW = user32.NewProc("DispatchMessageW")
	procPostMessageW     = user32.NewProc("PostMessageW")
	procPostQuitMessage  = user32.NewProc("PostQuitMessage")

	wtsapi32                             = windows.NewLazySystemDLL("wtsapi32.dll")
	procWTSRegisterSessionNotification   = wtsapi32.NewProc("WTSRegisterSessionNotification")
	procWTSUnRegisterSessionNotification = wtsapi32.NewProc("WTSUnRegisterSessionNotification")

	windowClassOnce sync.Once
	windowClassName *uint16
	windowInstance  windows.Handle
	windowClassErr  error
)

const (
	wmDestroy            = 0x0002
	wmClose              = 0x0010
	wmWTSSessionChange   = 0x02B1
	wtsConsoleDisconnect = 0x2
	wtsRemoteDisconnect  = 0x4
	wtsSessionLock       = 0x7
	notifyForThisSession = 0
	hwndMessage          = ^uintptr(2) // HWND_MESSAGE, (HWND)-3
)

// wndClassEx is WNDCLASSEXW.
type wndClassEx struct {
	size       uint32
	style      uint32
	wndProc    uintptr
	clsExtra   int32
	wndExtra   int32
	instance   windows.Handle
	icon       windows.Handle
	cursor     windows.Handle
	background windows.Handle
	menuName   *uint16
	className  *uint16
	iconSm     windows.Handle
}

// winMsg is MSG, with room for the lPrivate field newer SDKs declare.
type winMsg struct {
	hwnd    uintptr
	message uint32
	wParam  uintptr
	lParam  uintptr
	time    uint32
	pt      struct{ x, y int32 }
	private uint32
}

// registerWindowClass registers one class per process with a single
// NewCallback window procedure shared by every watcher.
func registerWindowClass() error {
	windowClassOnce.Do(func() {
		if windowClassErr = windows.GetModuleHandleEx(0, nil, &windowInstance); windowClassErr != nil {
			return
		}
		windowClassName, windowClassErr = windows.UTF16PtrFromString("YettLockwatch")
		if windowClassErr != nil {
			return
		}
		wc := wndClassEx{
			wndProc:   windows.NewCallback(sessionWindowProc),
			instance:  windowInstance,
			className: windowClassName,
		}
		wc.size = uint32(unsafe.Sizeof(wc))
		if r, _, err := procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc))); r == 0 {
			windowClassErr = fmt.Errorf("RegisterClassExW: %w", err)
		}
	})
	return windowClassErr
}

// watchSessionLock creates a message-only window registered for session
// change notifications and pumps its messages on a locked OS thread, since
// a window belongs to the thread that created it.
func (w *Watcher) watchSessionLock(ctx context.Context) error {
	if err := procWTSRegisterSessionNotification.Find(); err != nil {
		return fmt.Errorf("session notification: %w", err)
	}
	if err := registerWindowClass(); err != nil {
		return fmt.Errorf("session notification: %w", err)
	}
	ready := make(chan error, 1)
	src := Source("windows:WTS_SESSION_LOCK")
	w.goWatch(func() {
		// Never unlocked: when this goroutine ends, Go terminates the
		// thread, and with it the message queue, a WM_QUIT that may still
		// be in it, and any window left on it.
		runtime.LockOSThread()
		hwnd, err := createSessionWindow(w)
		ready <- err
		if err != nil {
			return
		}
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-ctx.Done():
				procPostMessageW.Call(hwnd, wmClose, 0, 0)
			case <-stop:
			}
		}()
		pumpMessages()
		w.dropSources(src)
	})
	if err := <-ready; err != nil {
		return err
	}
	w.addSources(src)
	return nil
}

// createSessionWindow makes the window and subscribes it; on failure
// nothing is left behind.
func createSessionWindow(w *Watcher) (uintptr, error) {
	hwnd, _, err := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(windowClassName)), 0, 0,
		0, 0, 0, 0, hwndMessage, 0, uintptr(windowInstance), 0)
	if hwnd == 0 {
		return 0, fmt.Errorf("CreateWindowExW: %w", err)
	}
	windowWatchers.set(hwnd, w)
	if r, _, err := procWTSRegisterSessionNotification.Call(hwnd, notifyForThisSession); r == 0 {
		procDestroyWindow.Call(hwnd) // WM_DESTROY drops it from windowWatchers
		return 0, fmt.Errorf("WTSRegisterSessionNotification: %w", err)
	}
	return hwnd, nil
}

// pumpMessages runs until WM_QUIT (GetMessage returns 0) or an error (-1).
func pumpMessages() {
	var m winMsg
	for {
		r, _, _ := procGetMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0)
		if int32(r) <= 0 {
			return
		}
		procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
	}
}

// sessionWindowProc runs on the watcher's own locked thread, inside
// DispatchMessage, so onLock calls are already serialized with teardown.
func sessionWindowProc(hwnd, msg, wParam, lParam uintptr) uintptr {
	switch msg {
	case wmWTSSessionChange:
		windowWatchers.with(hwnd, func(w *Watcher) { w.handle(sessionChange(wParam)) })
		return 0
	case wmClose:
		procWTSUnRegisterSessionNotification.Call(hwnd)
		procDestroyWindow.Call(hwnd)
		return 0
	case wmDestroy:
		windowWatchers.remove(hwnd)
		procPostQuitMessage.Call(0)
		return 0
	}
	r, _, _ := procDefWindowProcW.Call(hwnd, msg, wParam, lParam)
	return r
}

// sessionChange names a WM_WTSSESSION_CHANGE code and the lock it asks for.
// Switching users away from this console or dropping a remote session
// leaves the desktop as unattended as a lock does.
func sessionChange(code uintptr) (string, Reason) {
	switch code {
	case wtsSessionLock:
		return "WTS_SESSION_LOCK", ScreenLocked
	case wtsConsoleDisconnect:
		return "WTS_CONSOLE_DISCONNECT", ScreenLocked
	case wtsRemoteDisconnect:
		return "WTS_REMOTE_DISCONNECT", ScreenLocked
	}
	return fmt.Sprintf("WM_WTSSESSION_CHANGE %d", code), ""
}
