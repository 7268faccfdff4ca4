package vault

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A rotation reminder falls due its interval after the secret was
// entered: List flags the credential and Status counts it; a rotation
// starts it again; an edit of the reminder alone is announced as such,
// and a reminder out of range is refused. It survives a reopen, and a
// credential without one is sealed exactly as before reminders existed.
func TestRotationReminder(t *testing.T) {
	clock := newFakeClock()
	v, dir := newUnlocked(t, testOptions(clock))
	rec := &recorder{}
	v.Subscribe(rec.add)
	nc := sampleCredential("tracker", "CANARY-remind-1")
	nc.RotateEveryDays = 90
	c, err := v.Credentials().Add(nc)
	if err != nil {
		t.Fatal(err)
	}
	if want := c.SecretSetAt.Add(90 * 24 * time.Hour); !c.RotationDueAt.Equal(want) {
		t.Fatalf("due at %v, want %v", c.RotationDueAt, want)
	}
	other := sampleCredential("other", "CANARY-remind-2")
	other.Hosts = []string{"other.example.com"}
	if _, err := v.Credentials().Add(other); err != nil {
		t.Fatal(err)
	}
	due := func() (flagged []string, counted int) {
		t.Helper()
		list, err := v.Credentials().List()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range list {
			if l.RotationDue {
				flagged = append(flagged, l.Name)
			}
		}
		return flagged, v.Reminders().RotationsDue
	}
	clock.Advance(90*24*time.Hour - time.Second)
	if f, n := due(); len(f) != 0 || n != 0 {
		t.Fatalf("due a second early: %v %d", f, n)
	}
	clock.Advance(time.Second)
	if f, n := due(); len(f) != 1 || f[0] != "tracker" || n != 1 {
		t.Fatalf("at 90 days: flagged %v, counted %d", f, n)
	}

	rotated, err := v.Credentials().Rotate(c.ID, c.Version, NewSecret([]byte("CANARY-remind-3")))
	if err != nil {
		t.Fatal(err)
	}
	if f, n := due(); len(f) != 0 || n != 0 || !rotated.RotationDueAt.Equal(clock.Now().Add(90*24*time.Hour)) {
		t.Fatalf("after the rotation: %v %d, due at %v", f, n, rotated.RotationDueAt)
	}

	edit := CredentialEdit{Name: rotated.Name, Injection: rotated.Injection, Hosts: rotated.Hosts, PathPrefixes: rotated.PathPrefixes,
		Approval: rotated.Approval, RotateEveryDays: 30}
	edited, err := v.Credentials().Update(rotated.ID, rotated.Version, edit)
	if err != nil || edited.Version != rotated.Version+1 || edited.RotateEveryDays != 30 {
		t.Fatalf("the reminder edited: %+v %v", edited, err)
	}
	if e := rec.events[len(rec.events)-1]; e.Change != ChangeRotationReminder || e.Credential.ID != c.ID {
		t.Fatalf("a reminder-only edit announced as %+v", e)
	}
	for _, bad := range []int{-1, MaxRotateEveryDays + 1} {
		edit.RotateEveryDays = bad
		if _, err := v.Credentials().Update(edited.ID, edited.Version, edit); !errors.Is(err, ErrInvalid) {
			t.Fatalf("a reminder of %d days: %v", bad, err)
		}
	}
	edit.RotateEveryDays, edit.Approval = 0, ApprovalPerCall
	off, err := v.Credentials().Update(edited.ID, edited.Version, edit)
	if err != nil || off.RotateEveryDays != 0 || !off.RotationDueAt.IsZero() {
		t.Fatalf("the reminder turned off with another change: %+v %v", off, err)
	}
	if e := rec.events[len(rec.events)-1]; e.Change != ChangeCredentialEdited {
		t.Fatalf("an edit of the approval and the reminder announced as %+v", e)
	}
	edit.RotateEveryDays = 7
	if _, err := v.Credentials().Update(off.ID, off.Version, edit); err != nil {
		t.Fatal(err)
	}

	v.Close()
	v2 := openVault(t, dir, testOptions(clock))
	if err := v2.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(7 * 24 * time.Hour)
	if r := v2.Reminders(); r.RotationsDue != 1 {
		t.Fatalf("after reopening, 7 days on: %d due", r.RotationsDue)
	}

	plain := encodeCredential(sampleCredential("plain", "CANARY-remind-4"), credentialTimes{created: clock.Now()})
	if bytes.Contains(plain, []byte("rotate_every")) {
		t.Fatalf("a credential without a reminder carries the field: %s", bytes.ReplaceAll(plain, []byte("CANARY"), []byte("…")))
	}
	clear(plain)
}

// The backup reminder: off for an empty vault, due N days (30 until the
// person sets it) after the oldest credential while no backup was ever
// made, then N days after the last export, whose time and file the
// vault keeps sealed across a reopen and across other settings'
// changes; 0 turns it off, and a change is announced.
func TestBackupReminder(t *testing.T) {
	clock := newFakeClock()
	v, dir := newUnlocked(t, testOptions(clock))
	rec := &recorder{}
	v.Subscribe(rec.add)
	clock.Advance(100 * 24 * time.Hour)
	if b := v.Reminders().Backup; b.Due || b.ReminderDays != DefaultBackupReminderDays || !b.LastAt.IsZero() || b.LastPath != "" {
		t.Fatalf("an empty vault: %+v", b)
	}
	if _, err := v.Credentials().Add(sampleCredential("a", "CANARY-backup-remind")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30*24*time.Hour - time.Second)
	if v.Reminders().Backup.Due {
		t.Fatal("due a second early")
	}
	clock.Advance(time.Second)
	if !v.Reminders().Backup.Due {
		t.Fatal("not due 30 days after the first credential, with no backup")
	}

	out := filepath.Join(t.TempDir(), "x.yettbackup")
	if err := v.ExportBackup(pass(testPass), out); err != nil {
		t.Fatal(err)
	}
	exported := clock.Now()
	if b := v.Reminders().Backup; b.Due || !b.LastAt.Equal(exported) || b.LastPath != out {
		t.Fatalf("after an export: %+v", b)
	}
	if err := v.SetAutoLockAfter(time.Hour); err != nil { // rewrites the settings record
		t.Fatal(err)
	}
	if err := v.SetBackupReminderDays(7); err != nil {
		t.Fatal(err)
	}
	if e := rec.events[len(rec.events)-1]; e.Change != ChangeBackupReminder || e.Reason != "after 7 days" {
		t.Fatalf("the change announced as %+v", e)
	}
	for _, bad := range []int{-1, MaxBackupReminderDays + 1} {
		if err := v.SetBackupReminderDays(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%d days: %v", bad, err)
		}
	}

	v.Close()
	v2 := openVault(t, dir, testOptions(clock))
	if err := v2.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(7 * 24 * time.Hour)
	b := v2.Reminders().Backup
	if !b.Due || b.ReminderDays != 7 || !b.LastAt.Equal(exported) || b.LastPath != out {
		t.Fatalf("after reopening, 7 days on: %+v", b)
	}
	if err := v2.SetBackupReminderDays(0); err != nil {
		t.Fatal(err)
	}
	if b := v2.Reminders().Backup; b.Due || b.ReminderDays != 0 {
		t.Fatalf("turned off: %+v", b)
	}
	if v2.Status().AutoLockAfter != time.Hour {
		t.Fatal("the reminder's change lost the auto-lock time")
	}
	v2.Lock("user")
	if b := v2.Reminders().Backup; b != (BackupState{}) {
		t.Fatalf("a locked vault tells of its backups: %+v", b)
	}
}
