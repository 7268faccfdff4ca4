package keeper

import (
	"net/url"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
)

// recordVaultChangeLocked writes a person's change to the vault (a
// credential added, edited, rotated or removed, the passphrase, keyring
// unlock, the auto-lock time, a backup) into the log, whichever front end
// made it. Changes that are no one's doing (the keyring key went missing)
// carry no Change and are not recorded as a person's. k.mu held.
func (k *Keeper) recordVaultChangeLocked(e vault.Event) {
	if e.Change == "" {
		return
	}
	c := &audit.VaultChange{Change: string(e.Change)}
	if e.Change == vault.ChangeControls || e.Change == vault.ChangeBackupReminder {
		c.Name = e.Reason // what changed: "verification: every", "after 7 days"
	}
	if cr := e.Credential; cr != nil {
		// The vault bounds a name to 100 characters, well inside an
		// entry's field.
		c.CredentialID, c.Name, c.Version = cr.ID, cr.Name, cr.Version
	}
	k.recordLocked(audit.Event{Type: audit.EventVaultChanged, VaultEpoch: e.Epoch, VaultChange: c})
}

// recordOperationChange writes a person's change to the named operations
// into the log, whichever front end made it. It runs in the catalogue's
// delivery (backend/feed): after the write, without the catalogue's lock,
// on the writer's goroutine, which never holds k.mu.
func (k *Keeper) recordOperationChange(ch operation.Change) {
	e := audit.Event{Type: audit.EventOperationRemoved, NamedOperation: &audit.NamedOperation{Name: ch.Removed}}
	if o := ch.Saved; o != nil {
		e = audit.Event{Type: audit.EventOperationSaved, AuthorizationID: o.AuthorizationID, NamedOperation: &audit.NamedOperation{
			Name: o.Name, Method: o.Method, Target: templateHost(o.URLTemplate), Approval: o.Approval,
		}}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e.VaultEpoch = k.vault.Epoch()
	k.recordLocked(e)
}

// templateHost is the host an operation's URL template names (templates
// put placeholders in the path and query only).
func templateHost(t string) string {
	u, err := url.Parse(t)
	if err != nil {
		return ""
	}
	return u.Host
}
