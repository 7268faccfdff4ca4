//go:build windows

package notify

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// Windows toast notifications through WinRT (Windows.UI.Notifications),
// called through a small binding of the few interfaces Yett needs: no
// maintained Go library served by the module proxy both tags a toast (so it
// can be replaced and withdrawn from the Action Center) and reports its
// buttons, so this file does both on the vtables directly.
//
// The app is registered for toasts as an AppUserModelID under HKCU (no
// Start-menu shortcut needed), and each toast's Activated event reports
// which button was pressed while Yett runs, which it always does when it has
// a card to answer. Activation comes from the OS for that very toast object:
// no other process can raise it, and the button's arguments must still
// carry the card's one-time nonce.

const (
	appUserModelID = "dev.yett.Yett"
	toastGroup     = "approvals"

	roInitMultithreaded = 1
	sOK                 = 0
	eNoInterface        = 0x80004002
	rpcEChangedMode     = 0x80010106
)

var (
	combase                               = windows.NewLazySystemDLL("combase.dll")
	procRoInitialize                      = combase.NewProc("RoInitialize")
	procRoGetActivationFactory            = combase.NewProc("RoGetActivationFactory")
	procRoActivateInstance                = combase.NewProc("RoActivateInstance")
	procWindowsCreateString               = combase.NewProc("WindowsCreateString")
	procWindowsDeleteString               = combase.NewProc("WindowsDeleteString")
	procWindowsGetStringRawBuffer         = combase.NewProc("WindowsGetStringRawBuffer")
	shell32                               = windows.NewLazySystemDLL("shell32.dll")
	procSetCurrentProcessExplicitAppUserM = shell32.NewProc("SetCurrentProcessExplicitAppUserModelID")
)

func mustGUID(s string) windows.GUID {
	g, err := windows.GUIDFromString("{" + s + "}")
	if err != nil {
		panic(err)
	}
	return g
}

// Interface ids (windows.ui.notifications.h, windows.data.xml.dom.h).
var (
	iidIUnknown              = mustGUID("00000000-0000-0000-C000-000000000046")
	iidIAgileObject          = mustGUID("94ea2b94-e9cc-49e0-c0ff-ee64ca8f5b90")
	iidManagerStatics        = mustGUID("50ac103f-d235-4598-bbef-98fe4d1a3ad4")
	iidManagerStatics2       = mustGUID("7ab93c52-0e48-4750-ba9d-1a4113981847")
	iidToastFactory          = mustGUID("04124b20-82c6-4229-b109-fd9ed4662b53")
	iidToastNotification2    = mustGUID("9dfb9fd1-143a-490e-90bf-b9fba7132de7")
	iidXMLDocument           = mustGUID("f7f3a506-1e87-42d6-bcfb-b8c809fa5494")
	iidXMLDocumentIO         = mustGUID("6cd0e74e-ee65-4489-9ebf-ca43e87ba637")
	iidToastActivatedArgs    = mustGUID("e3bf92f3-c197-436f-8265-0625824f8dac")
	iidActivatedEventHandler = mustGUID("ab54de2d-97d9-5528-b6ad-105afe156530") // TypedEventHandler<ToastNotification, IInspectable>
)

// Vtable slots: IUnknown (3) and IInspectable (3) come first.
const (
	slotQueryInterface = 0
	slotRelease        = 2

	slotCreateToastNotifierWithID = 7  // IToastNotificationManagerStatics
	slotGetHistory                = 6  // IToastNotificationManagerStatics2
	slotCreateToastNotification   = 6  // IToastNotificationFactory
	slotAddActivated              = 11 // IToastNotification
	slotRemoveActivated           = 12
	slotPutTag                    = 6 // IToastNotification2
	slotPutGroup                  = 8
	slotShow                      = 6 // IToastNotifier
	slotHide                      = 7
	slotGetSetting                = 8
	slotRemoveGroupedTagWithID    = 8 // IToastNotificationHistory
	slotLoadXML                   = 6 // IXmlDocumentIO
	slotGetArguments              = 6 // IToastActivatedEventArgs
)

// comObject is a COM object as the ABI lays it out: a pointer to its
// vtable first.
type comObject struct{ vtbl *[64]uintptr }

func (o *comObject) call(slot int, args ...uintptr) error {
	hr, _, _ := syscall.SyscallN(o.vtbl[slot], append([]uintptr{uintptr(unsafe.Pointer(o))}, args...)...)
	if int32(hr) < 0 {
		return fmt.Errorf("HRESULT 0x%08x", uint32(hr))
	}
	return nil
}

func (o *comObject) query(iid *windows.GUID) (*comObject, error) {
	var out *comObject
	if err := o.call(slotQueryInterface, uintptr(unsafe.Pointer(iid)), uintptr(unsafe.Pointer(&out))); err != nil {
		return nil, err
	}
	return out, nil
}

func (o *comObject) release() {
	if o != nil {
		o.call(slotRelease)
	}
}

// hstring is a WinRT string handle.
type hstring uintptr

func newHString(s string) (hstring, error) {
	u, err := windows.UTF16FromString(s)
	if err != nil {
		return 0, err
	}
	var h hstring
	hr, _, _ := procWindowsCreateString.Call(uintptr(unsafe.Pointer(&u[0])), uintptr(len(u)-1), uintptr(unsafe.Pointer(&h)))
	if int32(hr) < 0 {
		return 0, fmt.Errorf("WindowsCreateString: HRESULT 0x%08x", uint32(hr))
	}
	return h, nil
}

func (h hstring) free() { procWindowsDeleteString.Call(uintptr(h)) }

func (h hstring) String() string {
	var n uint32
	p, _, _ := procWindowsGetStringRawBuffer.Call(uintptr(h), uintptr(unsafe.Pointer(&n)))
	if p == 0 || n == 0 {
		return ""
	}
	// p is a pointer the string owns, returned as a number: read it as
	// the pointer it is.
	return windows.UTF16ToString(unsafe.Slice(*(**uint16)(unsafe.Pointer(&p)), n))
}

func activationFactory(class string, iid *windows.GUID) (*comObject, error) {
	h, err := newHString(class)
	if err != nil {
		return nil, err
	}
	defer h.free()
	var out *comObject
	hr, _, _ := procRoGetActivationFactory.Call(uintptr(h), uintptr(unsafe.Pointer(iid)), uintptr(unsafe.Pointer(&out)))
	if int32(hr) < 0 {
		return nil, fmt.Errorf("RoGetActivationFactory(%s): HRESULT 0x%08x", class, uint32(hr))
	}
	return out, nil
}

func activateInstance(class string) (*comObject, error) {
	h, err := newHString(class)
	if err != nil {
		return nil, err
	}
	defer h.free()
	var out *comObject
	hr, _, _ := procRoActivateInstance.Call(uintptr(h), uintptr(unsafe.Pointer(&out)))
	if int32(hr) < 0 {
		return nil, fmt.Errorf("RoActivateInstance(%s): HRESULT 0x%08x", class, uint32(hr))
	}
	return out, nil
}

// toasts is the Windows Notifier. Every WinRT call runs on one goroutine
// locked to a thread initialised for WinRT.
type toasts struct {
	opts  Options
	h     Handlers
	calls chan func()
	done  chan struct{}

	notifier *comObject // IToastNotifier
	history  *comObject // IToastNotificationHistory

	mu     sync.Mutex
	shown  map[string]*toast
	status Status
	closed bool
}

// toast is one shown toast and its Activated registration.
type toast struct {
	card    string
	nonce   string
	obj     *comObject // IToastNotification
	handler *activatedHandler
	token   int64
}

// Open registers Yett for toasts and opens its notifier.
func Open(h Handlers, opts Options) (Notifier, error) {
	opts.defaults()
	if err := combase.Load(); err != nil {
		return nil, fmt.Errorf("%w: this Windows has no WinRT: %v", ErrUnavailable, err)
	}
	t := &toasts{opts: opts, h: h, calls: make(chan func()), done: make(chan struct{}), shown: map[string]*toast{}}
	started := make(chan error, 1)
	go t.thread(started)
	if err := <-started; err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	t.refreshStatus()
	return t, nil
}

// thread owns the WinRT calls.
func (t *toasts) thread(started chan<- error) {
	runtime.LockOSThread()
	defer close(t.done)
	hr, _, _ := procRoInitialize.Call(roInitMultithreaded)
	if int32(hr) < 0 && uint32(hr) != rpcEChangedMode {
		started <- fmt.Errorf("RoInitialize: HRESULT 0x%08x", uint32(hr))
		return
	}
	if err := t.setUp(); err != nil {
		started <- err
		return
	}
	started <- nil
	for fn := range t.calls {
		fn()
	}
}

// do runs fn on the WinRT thread and returns its error.
func (t *toasts) do(fn func() error) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return errors.New("notify: closed")
	}
	errc := make(chan error, 1)
	t.calls <- func() { errc <- fn() }
	return <-errc
}

// setUp registers the AppUserModelID (its name and icon in toasts) and
// opens the notifier and the Action Center's history for it.
func (t *toasts) setUp() error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, `Software\Classes\AppUserModelId\`+appUserModelID, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("registering %s: %v", appUserModelID, err)
	}
	k.SetStringValue("DisplayName", t.opts.AppName)
	if filepath.IsAbs(t.opts.Icon) {
		k.SetStringValue("IconUri", t.opts.Icon)
	}
	k.Close()
	if p, err := windows.UTF16PtrFromString(appUserModelID); err == nil {
		procSetCurrentProcessExplicitAppUserM.Call(uintptr(unsafe.Pointer(p)))
	}
	statics, err := activationFactory("Windows.UI.Notifications.ToastNotificationManager", &iidManagerStatics)
	if err != nil {
		return err
	}
	defer statics.release()
	id, err := newHString(appUserModelID)
	if err != nil {
		return err
	}
	defer id.free()
	if err := statics.call(slotCreateToastNotifierWithID, uintptr(id), uintptr(unsafe.Pointer(&t.notifier))); err != nil {
		return fmt.Errorf("CreateToastNotifierWithId: %v", err)
	}
	statics2, err := activationFactory("Windows.UI.Notifications.ToastNotificationManager", &iidManagerStatics2)
	if err != nil {
		return err
	}
	defer statics2.release()
	if err := statics2.call(slotGetHistory, uintptr(unsafe.Pointer(&t.history))); err != nil {
		return fmt.Errorf("ToastNotificationManager.History: %v", err)
	}
	return nil
}

// refreshStatus asks Windows whether Yett's toasts are turned on.
func (t *toasts) refreshStatus() {
	var setting int32
	err := t.do(func() error { return t.notifier.call(slotGetSetting, uintptr(unsafe.Pointer(&setting))) })
	st := Status{Server: "Windows notifications"}
	switch {
	case err != nil:
		st.Problem = "Windows did not say whether Yett may show notifications, so Yett shows its window when an agent asks."
	case setting != 0: // NotificationSetting.Enabled
		st.Problem = "Notifications for Yett are turned off in Windows Settings (System, Notifications), so Yett shows its window when an agent asks."
	default:
		st.Available, st.Actions = true, true
	}
	t.mu.Lock()
	t.status = st
	t.mu.Unlock()
}

func (t *toasts) Status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

func (t *toasts) Show(n Notification) error {
	t.refreshStatus()
	if st := t.Status(); !st.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, st.Problem)
	}
	t.mu.Lock()
	prev := t.shown[n.Card]
	t.mu.Unlock()
	var b [12]byte
	rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	if prev != nil {
		nonce = prev.nonce
	}
	var shown *toast
	err := t.do(func() error {
		if prev != nil {
			t.removeLocked(prev) // the same tag replaces it anyway; this also drops its handler
		}
		var err error
		shown, err = t.show(n, nonce)
		return err
	})
	if err != nil {
		return fmt.Errorf("notify: Windows refused the toast: %w", err)
	}
	t.mu.Lock()
	t.shown[n.Card] = shown
	t.mu.Unlock()
	return nil
}

// show builds and shows one toast. On the WinRT thread.
func (t *toasts) show(n Notification, nonce string) (*toast, error) {
	doc, err := activateInstance("Windows.Data.Xml.Dom.XmlDocument")
	if err != nil {
		return nil, err
	}
	defer doc.release()
	io, err := doc.query(&iidXMLDocumentIO)
	if err != nil {
		return nil, err
	}
	defer io.release()
	x, err := newHString(toastXML(n, nonce))
	if err != nil {
		return nil, err
	}
	defer x.free()
	if err := io.call(slotLoadXML, uintptr(x)); err != nil {
		return nil, fmt.Errorf("LoadXml: %v", err)
	}
	content, err := doc.query(&iidXMLDocument)
	if err != nil {
		return nil, err
	}
	defer content.release()
	factory, err := activationFactory("Windows.UI.Notifications.ToastNotification", &iidToastFactory)
	if err != nil {
		return nil, err
	}
	defer factory.release()
	tt := &toast{card: n.Card, nonce: nonce}
	if err := factory.call(slotCreateToastNotification, uintptr(unsafe.Pointer(content)), uintptr(unsafe.Pointer(&tt.obj))); err != nil {
		return nil, fmt.Errorf("CreateToastNotification: %v", err)
	}
	if err := t.tag(tt); err != nil {
		tt.obj.release()
		return nil, err
	}
	tt.handler = newActivatedHandler(t, tt)
	if err := tt.obj.call(slotAddActivated, uintptr(unsafe.Pointer(tt.handler)), uintptr(unsafe.Pointer(&tt.token))); err != nil {
		tt.obj.release()
		return nil, fmt.Errorf("add_Activated: %v", err)
	}
	if err := t.notifier.call(slotShow, uintptr(unsafe.Pointer(tt.obj))); err != nil {
		tt.obj.call(slotRemoveActivated, tokenArgs(tt.token)...)
		tt.obj.release()
		return nil, fmt.Errorf("Show: %v", err)
	}
	return tt, nil
}

// tag names the toast by its card, so a later toast for the card replaces
// it and a withdrawal finds it in the Action Center.
func (t *toasts) tag(tt *toast) error {
	t2, err := tt.obj.query(&iidToastNotification2)
	if err != nil {
		return err
	}
	defer t2.release()
	tag, err := newHString(tt.card)
	if err != nil {
		return err
	}
	defer tag.free()
	group, err := newHString(toastGroup)
	if err != nil {
		return err
	}
	defer group.free()
	if err := t2.call(slotPutTag, uintptr(tag)); err != nil {
		return fmt.Errorf("put_Tag: %v", err)
	}
	return t2.call(slotPutGroup, uintptr(group))
}

func (t *toasts) Withdraw(card string) error {
	t.mu.Lock()
	tt := t.shown[card]
	delete(t.shown, card)
	t.mu.Unlock()
	if tt == nil {
		return nil
	}
	return t.do(func() error { t.removeLocked(tt); return nil })
}

// removeLocked hides the toast, removes it from the Action Center and
// drops its handler. On the WinRT thread.
func (t *toasts) removeLocked(tt *toast) {
	t.notifier.call(slotHide, uintptr(unsafe.Pointer(tt.obj)))
	if tag, err := newHString(tt.card); err == nil {
		if group, err := newHString(toastGroup); err == nil {
			if id, err := newHString(appUserModelID); err == nil {
				t.history.call(slotRemoveGroupedTagWithID, uintptr(tag), uintptr(group), uintptr(id))
				id.free()
			}
			group.free()
		}
		tag.free()
	}
	tt.obj.call(slotRemoveActivated, tokenArgs(tt.token)...)
	tt.obj.release()
	tt.handler.retire()
}

func (t *toasts) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	shown := t.shown
	t.shown = map[string]*toast{}
	t.mu.Unlock()
	t.do(func() error {
		for _, tt := range shown {
			t.removeLocked(tt)
		}
		t.notifier.release()
		t.history.release()
		return nil
	})
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	close(t.calls)
	<-t.done
	return nil
}

// activated hands on what a toast's button or body reported. The
// arguments must carry the toast's nonce.
func (t *toasts) activated(tt *toast, args string) {
	args = clip(args)
	var r Response
	switch args {
	case "default":
		r = Response{Card: tt.card, Action: ActionOpen}
	case "approve-" + tt.nonce:
		r = Response{Card: tt.card, Action: ActionApprove}
	case "deny-" + tt.nonce:
		r = Response{Card: tt.card, Action: ActionDeny}
	default:
		if t.h.Reject != nil {
			t.h.Reject(Rejected{Card: tt.card, Action: args, Sender: "windows", Why: "the toast reported an action Yett did not offer on it"})
		}
		return
	}
	if t.h.Respond != nil {
		t.h.Respond(r)
	}
}

// activatedHandler is a TypedEventHandler<ToastNotification, IInspectable>
// implemented in Go: a COM object whose vtable points at Go callbacks. It
// stays referenced from its toast (and handlers, below) while Windows may
// call it.
type activatedHandler struct {
	vtbl  *handlerVtbl // first: the COM layout
	refs  atomic.Int32
	owner *toasts
	toast *toast
}

type handlerVtbl struct {
	QueryInterface, AddRef, Release, Invoke uintptr
}

var (
	theHandlerVtbl = &handlerVtbl{
		QueryInterface: windows.NewCallback(handlerQueryInterface),
		AddRef:         windows.NewCallback(handlerAddRef),
		Release:        windows.NewCallback(handlerRelease),
		Invoke:         windows.NewCallback(handlerInvoke),
	}
	// handlers keeps every live handler reachable for the collector while
	// Windows holds a pointer to it.
	handlersMu sync.Mutex
	handlers   = map[*activatedHandler]bool{}
)

func newActivatedHandler(t *toasts, tt *toast) *activatedHandler {
	h := &activatedHandler{vtbl: theHandlerVtbl, owner: t, toast: tt}
	h.refs.Store(1)
	handlersMu.Lock()
	handlers[h] = true
	handlersMu.Unlock()
	return h
}

// retire drops Yett's own reference; Windows may still hold others.
func (h *activatedHandler) retire() { handlerRelease(h) }

func handlerQueryInterface(h *activatedHandler, iid *windows.GUID, out *unsafe.Pointer) uintptr {
	switch *iid {
	case iidIUnknown, iidIAgileObject, iidActivatedEventHandler:
		h.refs.Add(1)
		*out = unsafe.Pointer(h)
		return sOK
	}
	*out = nil
	return eNoInterface
}

func handlerAddRef(h *activatedHandler) uintptr { return uintptr(h.refs.Add(1)) }

func handlerRelease(h *activatedHandler) uintptr {
	n := h.refs.Add(-1)
	if n == 0 {
		handlersMu.Lock()
		delete(handlers, h)
		handlersMu.Unlock()
	}
	return uintptr(n)
}

// handlerInvoke runs on a WinRT thread when the person clicks the toast or
// one of its buttons.
func handlerInvoke(h *activatedHandler, sender uintptr, args *comObject) uintptr {
	if args == nil {
		return sOK
	}
	a, err := args.query(&iidToastActivatedArgs)
	if err != nil {
		return sOK
	}
	var s hstring
	err = a.call(slotGetArguments, uintptr(unsafe.Pointer(&s)))
	a.release()
	if err != nil {
		return sOK
	}
	text := s.String()
	s.free()
	go h.owner.activated(h.toast, text)
	return sOK
}

// tokenArgs passes an EventRegistrationToken (an int64) as the ABI wants
// it: one word, or two on a 32-bit Windows.
func tokenArgs(tok int64) []uintptr {
	if unsafe.Sizeof(uintptr(0)) == 4 {
		return []uintptr{uintptr(uint32(tok)), uintptr(uint32(uint64(tok) >> 32))}
	}
	return []uintptr{uintptr(tok)}
}
