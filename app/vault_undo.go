package app

import (
	"errors"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// Undoing a credential's removal. RemoveCredential takes effect at once;
// for 30 seconds the window may bring the credential back, as it adds
// one: a click in the window, never a path an agent or the CLI has. What
// waits meanwhile is the vault's sealed record in this process's memory
// (vault.Credentials.Restore), so a lock or quitting Yett ends the chance
// and the removal stands.

// RemovedCredentialView is a removal the window can still undo, until
// UndoUntil.
type RemovedCredentialView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	UndoUntil string `json:"undoUntil"`
}

// RemovedCredentials lists the removals that can still be undone, the
// newest first.
func (s *VaultService) RemovedCredentials() ([]RemovedCredentialView, error) {
	list, err := s.vault.Credentials().Removed()
	if err != nil {
		return nil, s.publicError(err)
	}
	out := make([]RemovedCredentialView, 0, len(list))
	for _, r := range list {
		out = append(out, RemovedCredentialView{ID: r.ID, Name: r.Name, UndoUntil: r.UndoUntil.UTC().Format(time.RFC3339Nano)})
	}
	return out, nil
}

// UndoRemoveCredential brings a credential removed in the last 30 seconds
// back as it was, at its next version: agents' next calls can use it
// again, a call refused meanwhile stays refused.
func (s *VaultService) UndoRemoveCredential(id string) (CredentialView, error) {
	c, err := s.vault.Credentials().Restore(id)
	if errors.Is(err, vault.ErrUndoExpired) {
		return CredentialView{}, shown("Too late to undo: the removal stands (30 seconds passed, or the vault locked since). Add the credential again if you need it.")
	}
	if err != nil {
		return CredentialView{}, s.publicError(err)
	}
	return credentialView(c), nil
}
