//go:build windows

package notify

import (
	"errors"
	"testing"

	"golang.org/x/sys/windows/registry"
)

// TestToastsOnWindows: the WinRT plumbing a toast needs works as far as
// this Windows has it: HSTRINGs round-trip, and Open either gives a
// notifier whose status says whether toasts may show, or ErrUnavailable
// with words a person can read (Wine has no ToastNotificationManager;
// that a toast shows and its buttons come back needs Windows:
// docs/windows.md). Yett's AppUserModelID is registered with its name
// either way once WinRT is there.
func TestToastsOnWindows(t *testing.T) {
	if err := combase.Load(); err != nil {
		t.Fatalf("combase.dll: %v", err)
	}
	h, err := newHString("Yett — Approve")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.String(); got != "Yett — Approve" {
		t.Fatalf("HSTRING round trip: %q", got)
	}
	h.free()
	n, err := Open(Handlers{}, Options{AppName: "Yett test"})
	switch {
	case err == nil:
		st := n.Status()
		if st.Server != "Windows notifications" || (!st.Available && st.Problem == "") {
			t.Errorf("status %+v", st)
		}
		n.Close()
	case errors.Is(err, ErrUnavailable):
		t.Logf("toasts unavailable here: %v", err)
		if len(err.Error()) < len(ErrUnavailable.Error())+5 {
			t.Errorf("ErrUnavailable without a reason: %v", err)
		}
	default:
		t.Fatalf("Open: %v, want a notifier or ErrUnavailable", err)
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Classes\AppUserModelId\`+appUserModelID, registry.QUERY_VALUE)
	if err != nil {
		t.Fatalf("the AppUserModelID is not registered: %v", err)
	}
	defer k.Close()
	if name, _, err := k.GetStringValue("DisplayName"); err != nil || name != "Yett test" {
		t.Fatalf("DisplayName %q, %v", name, err)
	}
}
