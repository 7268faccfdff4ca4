//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// TestCredentialRotationReminder: --rotate-every on add sets the
// reminder, show says when it falls due, edit --rotate-every 0 takes it
// away (recorded as the reminder's change, with "terminal" as its
// surface), and a reminder out of range is refused before the passphrase
// is asked.
func TestCredentialRotationReminder(t *testing.T) {
	home := newHome(t)
	env := homeEnv(home)
	runSetup(t, env, nil, "init")
	runSetup(t, env, func(r *ptyRun) { r.answer(t, "(not shown as you type): ", setupCanary) },
		"credential", "add", "--name", "tracker", "--host", "api.example.com", "--rotate-every", "90")
	show := func() string {
		t.Helper()
		r := startPTY(t, env, yettBin, "credential", "show", "tracker")
		r.answer(t, "Yett vault passphrase: ", setupPassphrase)
		if code := r.wait(t); code != 0 {
			t.Fatalf("show: exit %d\n%s", code, r.screen.String())
		}
		return strings.Join(strings.Fields(r.screen.String()), " ")
	}
	// Added a moment before show: 90 days ahead, or 89 when midnight
	// passed in between.
	if out := show(); !strings.Contains(out, "rotate every 90 days, due 20") ||
		!strings.Contains(out, " (in 90 days)") && !strings.Contains(out, " (in 89 days)") {
		t.Fatalf("show with a 90-day reminder:\n%s", out)
	}
	runSetup(t, env, nil, "credential", "edit", "tracker", "--rotate-every", "0")
	if out := show(); !strings.Contains(out, "rotate no reminder") {
		t.Fatalf("show with the reminder taken away:\n%s", out)
	}
	bad := startPTY(t, env, yettBin, "credential", "edit", "tracker", "--rotate-every", "4000")
	if code := bad.wait(t); code != 2 || !strings.Contains(bad.screen.String(), "--rotate-every is 1 to 3650 days") ||
		strings.Contains(bad.screen.String(), "passphrase") {
		t.Fatalf("a reminder of 4000 days: exit %d\n%s", code, bad.screen.String())
	}
	var changes []string
	for _, e := range auditEntries(t, home) {
		if vc := e.Event.VaultChange; e.Event.Type == audit.EventVaultChanged && vc != nil {
			changes = append(changes, vc.Change)
			if e.Event.Surface != originTerminal {
				t.Errorf("%s with surface %q", vc.Change, e.Event.Surface)
			}
		}
	}
	if got := strings.Join(changes, ","); got != "credential_added,rotation_reminder_changed" {
		t.Errorf("vault changes recorded: %s", got)
	}
}

// rotationWords, as list and show print it, before and after the date.
func TestRotationWords(t *testing.T) {
	set := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	c := vault.CredentialView{SecretSetAt: set}
	if got := rotationWords(c, set); !strings.HasPrefix(got, "no reminder") {
		t.Errorf("none: %q", got)
	}
	c.RotateEveryDays, c.RotationDueAt = 30, set.Add(30*24*time.Hour)
	for _, tt := range []struct {
		after time.Duration
		want  string
	}{
		{0, "every 30 days, due 2026-03-31 (in 30 days)"},
		{29 * 24 * time.Hour, "every 30 days, due 2026-03-31 (tomorrow)"},
		{29*24*time.Hour + 13*time.Hour, "every 30 days, due 2026-03-31 (today)"},
		{30 * 24 * time.Hour, "every 30 days, due since 2026-03-31: rotate it (yett credential rotate)"},
	} {
		if got := rotationWords(c, set.Add(tt.after)); got != tt.want {
			t.Errorf("%v after: %q, want %q", tt.after, got, tt.want)
		}
	}
}
