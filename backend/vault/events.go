package vault

// EventKind names a vault state change.
type EventKind string

const (
	EventLocked   EventKind = "locked"
	EventUnlocked EventKind = "unlocked"
	EventCreated  EventKind = "created"
	EventReset    EventKind = "reset"
	EventChanged  EventKind = "changed" // credentials or settings changed, or the epoch advanced while locked
	// EventRestored: the vault's contents were replaced by a backup's
	// (RestoreBackup). The vault is locked (or unlocked by the same call,
	// which then announces "unlocked" after this).
	EventRestored EventKind = "restored"
)

// Change names what an EventChanged changed, for whoever records it (the
// composition root writes each into the audit log). Empty for changes that
// are not the person's doing (the keyring key went missing).
type Change string

const (
	ChangeCredentialAdded   Change = "credential_added"
	ChangeCredentialEdited  Change = "credential_edited"
	ChangeSecretRotated     Change = "secret_rotated"
	ChangeCredentialRemoved Change = "credential_removed"
	// ChangeCredentialRestored: a removal undone (Credentials.Restore).
	ChangeCredentialRestored Change = "credential_restored"
	// ChangeRotationReminder: an edit that changed only the rotation
	// reminder.
	ChangeRotationReminder Change = "rotation_reminder_changed"
	ChangePassphrase       Change = "passphrase_changed"
	ChangeKeyringOn        Change = "keyring_on"
	ChangeKeyringOff       Change = "keyring_off"
	ChangeAutoLock         Change = "auto_lock_changed"
	ChangeBackupExported   Change = "backup_exported"
	ChangeBackupRestored   Change = "backup_restored"
	// ChangeBackupReminder: the backup reminder's interval changed.
	ChangeBackupReminder Change = "backup_reminder_changed"
	// ChangeControls: the sealed controls changed (SetControlsBlob); the
	// event's Reason says which.
	ChangeControls Change = "controls_changed"
)

// CredentialRef names the credential an event is about: never its secret.
type CredentialRef struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version uint64 `json:"version"`
}

// Event is delivered to subscribers after the change it reports is durable.
type Event struct {
	Kind   EventKind `json:"kind"`
	Epoch  uint64    `json:"epoch"`
	Reason string    `json:"reason,omitempty"`
	// EpochNotSaved: the change happened and the epoch moved, in memory
	// only: the disk refused the new value (see ErrEpochNotSaved).
	EpochNotSaved bool `json:"epoch_not_saved,omitempty"`
	// Change says what changed (EventChanged, EventRestored); Credential
	// names the credential for the credential changes, at its new version
	// (its last one for a removal).
	Change     Change         `json:"change,omitempty"`
	Credential *CredentialRef `json:"credential,omitempty"`
}

// Subscribe registers fn for every later event and returns a cancel func.
// Delivery follows backend/feed's contract: in the order the changes
// happened, one at a time, never while the vault's mutex is held, so fn may
// call any Vault method (including Status or Lock); on the goroutine that
// made the change, unless another is delivering already.
func (v *Vault) Subscribe(fn func(Event)) (cancel func()) { return v.events.Subscribe(fn) }

// enqueue is called with v.mu held, so the queue order is the order of the
// state changes.
func (v *session) enqueue(e Event) { v.events.Queue(e) }

// deliver is called without v.mu.
func (v *session) deliver() { v.events.Deliver() }
