package app

import (
	"testing"
	"time"

	"fyne.io/systray"

	"github.com/yettdev/yett/backend/vault"
)

// On Windows '&' marks a menu item's mnemonic: an agent that names its
// program "a&pprove" must not get an underlined accelerator in Yett's menu,
// nor lose the character.
func TestTrayMenuTextOnWindows(t *testing.T) {
	for in, want := range map[string]string{"a&pprove": "a&&pprove", "&&": "&&&&", "plain_name": "plain_name"} {
		if got := menuText(in); got != want {
			t.Errorf("menuText(%q) = %q, want %q", in, got, want)
		}
	}
	label := trayCardLabel(ApprovalCard{Kind: "session", Target: "api.example.com", Agent: AgentView{Executable: "claude&co\r\nApprove"}})
	if got := menuText(label); got != `claude&&co\u000d\u000aApprove: asks to use api.example.com` {
		t.Fatalf("the card's line reads %q", got)
	}
}

// The Windows tray starts on a thread of its own and builds its menu (the
// hidden window and the notification-area icon, under Wine's), and stops.
func TestTrayStartsAndStopsOnWindows(t *testing.T) {
	ready := make(chan struct{})
	stop := runSystray(func() {
		setTrayImage()
		it := systray.AddMenuItem(menuText("Open Yett & show"), "")
		it.Hide()
		_ = buildTrayMenu(nil, vault.StateLocked)
		close(ready)
	})
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the tray was not ready in 30 s")
	}
	stop()
}
