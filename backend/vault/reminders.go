package vault

import (
	"fmt"
	"path/filepath"
	"time"
)

// Reminders a password manager's user expects: a credential whose secret
// is older than the rotation interval the person chose, and a vault with
// no backup in the last N days. Both are computed here from the sealed
// records, so every front end (the app's status, `yett credential list`)
// says the same thing.

const (
	// DefaultBackupReminderDays is the backup reminder's interval until
	// the person sets one.
	DefaultBackupReminderDays = 30
	// MaxBackupReminderDays bounds it.
	MaxBackupReminderDays = 365
)

const day = 24 * time.Hour

// rotationDue says whether the reminder had come due at now.
func (c CredentialView) rotationDue(now time.Time) bool {
	return !c.RotationDueAt.IsZero() && !now.Before(c.RotationDueAt)
}

// BackupState is what the vault knows of its backups: only exports made
// by a Yett that recorded them (this one on), and no secret.
type BackupState struct {
	// LastAt and LastPath are the last export's time and file; zero and
	// "" when none was recorded.
	LastAt   time.Time
	LastPath string
	// ReminderDays is the reminder's interval, 0 when the person turned
	// it off.
	ReminderDays int
	// Due: the reminder is on and no backup was made in ReminderDays
	// (counted from the oldest credential, SSH host or MCP server while
	// there was never one: an empty vault has nothing to lose).
	Due bool
}

// backupSettings are the settings record's backup fields, in memory while
// unlocked.
type backupSettings struct {
	lastAt   time.Time
	lastPath string
	// reminderDays is nil until the person sets it (the default applies).
	reminderDays *int
}

func (b backupSettings) days() int {
	if b.reminderDays == nil {
		return DefaultBackupReminderDays
	}
	return *b.reminderDays
}

// changeSettings seals the settings record with edit's change as its next
// version, then lets apply take it into memory and announces it as kind,
// with why as its reason. Errors: ErrLocked.
func (v *Vault) changeSettings(kind Change, why string, edit func(*settingsRecord), apply func()) error {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	s := v.settingsLocked()
	edit(&s)
	if err := v.putSettingsLocked(s); err != nil {
		v.mu.Unlock()
		return err
	}
	apply()
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: why, Change: kind})
	v.mu.Unlock()
	v.session().deliver()
	return nil
}

// settingsLocked is the settings record as this process holds it, for a
// change to one field. v.mu held, unlocked.
func (v *Vault) settingsLocked() settingsRecord {
	s := settingsRecord{AutoLockAfter: v.autoLock, Controls: v.controls, LastBackupPath: v.backup.lastPath,
		BackupReminderDays: v.backup.reminderDays}
	if !v.backup.lastAt.IsZero() {
		at := v.backup.lastAt.UTC()
		s.LastBackupAt = &at
	}
	return s
}

// backupFromSettings reads the backup fields of a settings record (nil:
// none yet).
func backupFromSettings(s *settingsRecord) backupSettings {
	if s == nil {
		return backupSettings{}
	}
	b := backupSettings{lastPath: s.LastBackupPath, reminderDays: s.BackupReminderDays}
	if s.LastBackupAt != nil {
		b.lastAt = *s.LastBackupAt
	}
	return b
}

func checkBackupReminder(days int) error {
	if days < 0 || days > MaxBackupReminderDays {
		return fmt.Errorf("%w: the backup reminder is 1 to %d days, or off", ErrInvalid, MaxBackupReminderDays)
	}
	return nil
}

// Reminders is what waits for the person: how many credentials'
// rotation reminders are due, and the backups. Zero while locked.
type Reminders struct {
	RotationsDue int
	Backup       BackupState
}

// Reminders reports the reminders as of now. It reads every credential's,
// host's and server's metadata, so it is the window's to ask, not the
// gateway's per call (which asks Status).
func (v *Vault) Reminders() Reminders {
	v.mu.Lock()
	defer v.mu.Unlock()
	var r Reminders
	if v.state != StateUnlocked {
		return r
	}
	now := v.opts.Now()
	var oldest time.Time
	older := func(t time.Time) {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	for _, c := range v.creds {
		if c.view.rotationDue(now) {
			r.RotationsDue++
		}
		older(c.view.CreatedAt)
	}
	for _, h := range v.hosts {
		older(h.view.CreatedAt)
	}
	for _, m := range v.servers {
		older(m.view.CreatedAt)
	}
	b := BackupState{LastAt: v.backup.lastAt, LastPath: v.backup.lastPath, ReminderDays: v.backup.days()}
	since := b.LastAt
	if since.IsZero() {
		since = oldest
	}
	b.Due = b.ReminderDays > 0 && !since.IsZero() && !now.Before(since.Add(time.Duration(b.ReminderDays)*day))
	r.Backup = b
	return r
}

// SetBackupReminderDays sets how many days without a backup make the
// vault remind the person (0 turns the reminder off), sealed in the
// settings record and announced as ChangeBackupReminder.
// Errors: ErrLocked, ErrInvalid.
func (v *Vault) SetBackupReminderDays(days int) error {
	if err := checkBackupReminder(days); err != nil {
		return err
	}
	why := "off"
	if days > 0 {
		why = fmt.Sprintf("after %d days", days)
	}
	return v.changeSettings(ChangeBackupReminder, why, func(s *settingsRecord) { s.BackupReminderDays = &days },
		func() { v.backup.reminderDays = &days })
}

// recordBackupLocked notes a backup exported to dest at now in the
// settings record. v.mu held, unlocked.
func (v *Vault) recordBackupLocked(dest string, now time.Time) error {
	if abs, err := filepath.Abs(dest); err == nil {
		dest = abs
	}
	s := v.settingsLocked()
	at := now.UTC()
	s.LastBackupAt, s.LastBackupPath = &at, dest
	if err := v.putSettingsLocked(s); err != nil {
		return err
	}
	v.backup.lastAt, v.backup.lastPath = at, dest
	return nil
}
