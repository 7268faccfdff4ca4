//go:build unix

package app

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// testClock is a settable clock for the vault under a service.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newServiceAt is newService over a vault that reads the time from clock,
// created and unlocked.
func newServiceAt(t *testing.T, clock *testClock) (*VaultService, *recorder, *bytes.Buffer) {
	t.Helper()
	s, rec, logs := serviceOver(t, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}, Now: clock.Now})
	if _, err := s.Create("correct horse battery", false); err != nil {
		t.Fatal(err)
	}
	return s, rec, logs
}

// TestUndoRemoveCredential: the window's undo of a removal, through the
// bound service: the removal lists with its deadline; the undo brings the
// credential back with its settings at the next version; a second undo,
// one after 30 seconds and one after a lock are refused in words for a
// person. No answer, event or log line carries the secret.
func TestUndoRemoveCredential(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	s, rec, logs := newServiceAt(t, clock)
	c, err := s.AddCredential(NewCredentialForm{Name: "tracker", Secret: canary, Format: "bearer",
		Hosts: []string{"api.example.com"}, Approval: "per_call", RotateEveryDays: 90})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveCredential(c.ID); err != nil {
		t.Fatal(err)
	}
	removed, err := s.RemovedCredentials()
	if err != nil || len(removed) != 1 || removed[0] != (RemovedCredentialView{ID: c.ID, Name: "tracker", UndoUntil: "2026-03-01T09:00:30Z"}) {
		t.Fatalf("removed %+v %v", removed, err)
	}
	if list, _ := s.ListCredentials(); len(list) != 0 {
		t.Fatalf("listed after the removal: %+v", list)
	}
	clock.advance(29 * time.Second)
	back, err := s.UndoRemoveCredential(c.ID)
	if err != nil || back.ID != c.ID || back.Name != "tracker" || back.Approval != "per_call" || back.RotateEveryDays != 90 ||
		back.Version != c.Version+1 || back.CreatedAt != c.CreatedAt || back.SecretSetAt != c.SecretSetAt {
		t.Fatalf("undo: %+v %v", back, err)
	}
	tooLate := func(what string) {
		t.Helper()
		if _, err := s.UndoRemoveCredential(c.ID); err == nil || !strings.HasPrefix(err.Error(), "Too late to undo: the removal stands") {
			t.Fatalf("%s: %v", what, err)
		}
	}
	tooLate("a second undo")

	if err := s.RemoveCredential(c.ID); err != nil {
		t.Fatal(err)
	}
	clock.advance(30 * time.Second)
	tooLate("an undo 30 s after the removal")
	if removed, _ := s.RemovedCredentials(); len(removed) != 0 {
		t.Fatalf("still listed after 30 s: %+v", removed)
	}

	again, _ := s.AddCredential(NewCredentialForm{Name: "other", Secret: canary, Format: "bearer", Hosts: []string{"b.example.com"}, Approval: "session"})
	if err := s.RemoveCredential(again.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Unlock("correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UndoRemoveCredential(again.ID); err == nil || !strings.HasPrefix(err.Error(), "Too late to undo") {
		t.Fatalf("an undo after a lock: %v", err)
	}
	for where, text := range map[string]string{"events": rec.all(), "logs": logs.String()} {
		if strings.Contains(text, canary) {
			t.Fatalf("the secret is in the %s", where)
		}
	}
}

// TestUndoKeepsWhoAnswers: a credential added with who answers for it is
// under control again once its removal is undone (the inventory keeps its
// row by the credential's id, which the undo keeps).
func TestUndoKeepsWhoAnswers(t *testing.T) {
	f := newMCPFixture(t)
	vs := newVaultService(f.v, &eventSink{}, slog.New(slog.DiscardHandler), false)
	defer vs.close()
	vs.inventory = f.svc.inventory
	c, err := vs.AddCredential(NewCredentialForm{Name: "owned", Secret: canary, Format: "bearer", Hosts: []string{"owned.example.com"},
		Approval: "session", Owner: "ana", BackupRevoker: "ana", Environment: "production"})
	if err != nil {
		t.Fatal(err)
	}
	if err := vs.RemoveCredential(c.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.svc.inventory.rowsByID(slog.New(slog.DiscardHandler), "test")[c.ID]; ok {
		t.Fatal("the removed credential still has an inventory row")
	}
	if _, err := vs.UndoRemoveCredential(c.ID); err != nil {
		t.Fatal(err)
	}
	r, ok := f.svc.inventory.rowsByID(slog.New(slog.DiscardHandler), "test")[c.ID]
	if !ok || !r.Controlled || r.Owner != "ana" || r.BackupRevoker != "ana" || r.Environment != "production" {
		t.Fatalf("after the undo: %+v (found %v)", r, ok)
	}
}

// TestRemindersInTheStatus: a credential's rotation reminder and the
// backup reminder reach the window as the vault computes them: the
// credential flagged and counted once due, a rotation clearing it; the
// last backup's time and file after an export; the backup reminder's
// interval set, refused out of range, and off.
func TestRemindersInTheStatus(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	s, _, _ := newServiceAt(t, clock)
	c, err := s.AddCredential(NewCredentialForm{Name: "tracker", Secret: canary, Format: "bearer",
		Hosts: []string{"api.example.com"}, Approval: "session", RotateEveryDays: 30})
	if err != nil {
		t.Fatal(err)
	}
	if c.RotateEveryDays != 30 || c.RotationDueAt != "2026-03-31T09:00:00Z" || c.RotationDue {
		t.Fatalf("added %+v", c)
	}
	if _, err := s.AddCredential(NewCredentialForm{Name: "bad", Secret: canary, Format: "bearer", Hosts: []string{"b.example.com"},
		Approval: "session", RotateEveryDays: 4000}); err == nil || !strings.Contains(err.Error(), "rotation reminder") {
		t.Fatalf("a reminder of 4000 days: %v", err)
	}
	st := s.Status()
	if st.RotationsDue != 0 || st.BackupDue || st.BackupReminderDays != vault.DefaultBackupReminderDays || st.LastBackupAt != "" {
		t.Fatalf("at the start: %+v", st)
	}
	clock.advance(30 * 24 * time.Hour)
	list, _ := s.ListCredentials()
	if st := s.Status(); len(list) != 1 || !list[0].RotationDue || st.RotationsDue != 1 || !st.BackupDue {
		t.Fatalf("30 days on: %+v, status %+v", list, st)
	}
	rotated, err := s.RotateSecret(c.ID, c.Version, canary+"-new")
	if err != nil || rotated.RotationDue || rotated.RotationDueAt != "2026-04-30T09:00:00Z" {
		t.Fatalf("rotated %+v %v", rotated, err)
	}
	if _, err := s.UpdateCredential(c.ID, rotated.Version, CredentialEditForm{Name: "tracker", Format: "bearer",
		Hosts: []string{"api.example.com"}, Approval: "session"}); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListCredentials(); list[0].RotateEveryDays != 0 || list[0].RotationDueAt != "" {
		t.Fatalf("the reminder turned off by the edit form: %+v", list[0])
	}

	dir := t.TempDir()
	s.setDialogs(fileDialogs{save: func(_, name string) (string, error) { return filepath.Join(dir, name), nil }})
	exp, err := s.ExportBackup("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.BackupDue || st.LastBackupAt != "2026-03-31T09:00:00Z" || st.LastBackupPath != exp.Path {
		t.Fatalf("after the export: %+v", st)
	}
	if _, err := s.SetBackupReminderDays(366); err == nil || err.Error() != "The reminder is 1 to 365 days, or off." {
		t.Fatalf("366 days: %v", err)
	}
	st, err = s.SetBackupReminderDays(0)
	if err != nil || st.BackupReminderDays != 0 || st.BackupDue {
		t.Fatalf("off: %+v %v", st, err)
	}
	s.Lock()
	if st := s.Status(); st.LastBackupAt != "" || st.LastBackupPath != "" || st.RotationsDue != 0 {
		t.Fatalf("a locked vault tells the window of its backups: %+v", st)
	}
}
