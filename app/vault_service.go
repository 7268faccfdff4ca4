package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/credimport"
	"github.com/yettdev/yett/backend/vault"
)

// VaultService is bound to the UI as window.go.app.VaultService. Every
// method returns redacted views; passphrases and secrets only ever travel
// from the UI into the vault, never back.
type VaultService struct {
	// inventory keeps who answers for a credential added here.
	inventory  *InventoryService
	vault      *vault.Vault
	events     *eventSink
	log        *slog.Logger
	hasKeyring bool
	cancel     func()

	// keyringMu guards stopKeyring, which ends the current wait for the
	// OS keyring (CancelKeyringWait).
	keyringMu   sync.Mutex
	stopKeyring context.CancelFunc

	dialogMu sync.Mutex
	dialogs  fileDialogs

	// imports holds what an import read until the person chooses; a lock
	// wipes it (import_service.go).
	imports *credimport.Held
}

func newVaultService(v *vault.Vault, events *eventSink, log *slog.Logger, hasKeyring bool) *VaultService {
	s := &VaultService{vault: v, events: events, log: log, hasKeyring: hasKeyring, dialogs: noDialogs(),
		imports: credimport.NewHeld(importTTL, importsHeld)}
	s.cancel = v.Subscribe(func(e vault.Event) {
		switch e.Kind {
		case vault.EventLocked, vault.EventReset, vault.EventRestored:
			s.imports.DropAll()
		}
		s.events.send(EventVaultStatus, s.Status())
	})
	return s
}

func (s *VaultService) close() {
	if s != nil && s.cancel != nil {
		s.cancel()
	}
	if s != nil && s.imports != nil {
		s.imports.DropAll()
	}
}

// Status reports the vault's state for the UI.
func (s *VaultService) Status() VaultStatus {
	return statusView(s.vault.Status(), s.vault.Reminders(), s.hasKeyring)
}

// Create initialises a new vault protected by passphrase and, if useKeyring,
// also by a key kept in the OS keyring.
func (s *VaultService) Create(passphrase string, useKeyring bool) (VaultStatus, error) {
	p := vault.Passphrase(passphrase)
	defer wipe(p)
	ctx, done := s.keyringWait()
	defer done()
	if err := s.vault.CreateContext(ctx, p, useKeyring); err != nil {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}

// Unlock opens the vault with the passphrase.
func (s *VaultService) Unlock(passphrase string) (VaultStatus, error) {
	p := vault.Passphrase(passphrase)
	defer wipe(p)
	if err := s.vault.Unlock(p); err != nil {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}

// UnlockWithKeyring opens the vault with the key kept in the OS keyring.
func (s *VaultService) UnlockWithKeyring() (VaultStatus, error) {
	ctx, done := s.keyringWait()
	defer done()
	if err := s.vault.UnlockWithKeyringContext(ctx); err != nil {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}

// Lock locks the vault now.
func (s *VaultService) Lock() (VaultStatus, error) {
	if err := s.vault.Lock("user"); err != nil && !errors.Is(err, vault.ErrLocked) {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}

// SetAutoLockMinutes sets the idle time after which the vault locks itself.
func (s *VaultService) SetAutoLockMinutes(minutes int) (VaultStatus, error) {
	if minutes < 1 || minutes > 7*24*60 {
		return s.Status(), shown("Auto-lock must be between 1 minute and 7 days.")
	}
	if err := s.vault.SetAutoLockAfter(time.Duration(minutes) * time.Minute); err != nil {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}

// EnableKeyring turns the OS keyring unlock method on or off.
func (s *VaultService) EnableKeyring(on bool) (VaultStatus, error) {
	ctx, done := s.keyringWait()
	defer done()
	if err := s.vault.EnableKeyringContext(ctx, on); err != nil {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}

// Touch records that the person is using Yett; it restarts the idle timer.
func (s *VaultService) Touch() {
	s.vault.Touch()
	s.events.send(EventVaultStatus, s.Status())
}

// ListCredentials lists the stored credentials without their secrets.
func (s *VaultService) ListCredentials() ([]CredentialView, error) {
	list, err := s.vault.Credentials().List()
	if err != nil {
		return nil, s.publicError(err)
	}
	out := make([]CredentialView, 0, len(list))
	for _, c := range list {
		v := credentialView(c)
		if overlaps, err := s.vault.Credentials().CheckBindings(c.Hosts, c.PathPrefixes, c.ID); err == nil {
			for _, o := range overlaps {
				v.OverlapsWith = append(v.OverlapsWith, o.Other.Name)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// AddCredential stores a new credential. Its secret is write-only: it is
// never returned to the UI again.
func (s *VaultService) AddCredential(form NewCredentialForm) (CredentialView, error) {
	nc := form.toVault()
	defer nc.Secret.Wipe()
	c, err := s.vault.Credentials().Add(nc)
	if err != nil {
		return CredentialView{}, s.publicError(err)
	}
	return credentialView(c), s.inventory.declare(c.ID, c.Name, form.Owner, form.BackupRevoker, form.Environment)
}

// RemoveCredential deletes a credential.
func (s *VaultService) RemoveCredential(id string) error {
	return s.publicError(s.vault.Credentials().Remove(id))
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

// vaultTexts are the vault's errors whose messages are written for a
// person (the vault guarantees none quotes a passphrase or secret).
var vaultTexts = []known{
	{vault.ErrCredentialChanged, "This credential changed since the form was opened (another window or yett serve changed it). Close the form and open it again."},
	{err: vault.ErrAlreadyInitialised}, {err: vault.ErrNotInitialised}, {err: vault.ErrLocked},
	{err: vault.ErrWrongPassphrase}, {err: vault.ErrWeakPassphrase}, {err: vault.ErrDamaged},
	{err: vault.ErrKeyringUnavailable}, {err: vault.ErrKeyringNotEnabled}, {err: vault.ErrKeyringKeyMissing},
	{err: vault.ErrInvalid}, {err: vault.ErrNotFound}, {err: vault.ErrClosed},
	{err: vault.ErrKeyringCancelled}, {err: vault.ErrNotABackup},
}

// publicError chooses the text the UI shows for err; a throttled unlock
// says when to try again.
func (s *VaultService) publicError(err error) error {
	var throttled *vault.ThrottledError
	if errors.As(err, &throttled) {
		secs := int((throttled.RetryAfter + time.Second - 1) / time.Second)
		return shown(fmt.Sprintf("Too many wrong passphrases. Try again in %d s.", secs))
	}
	return publicError(s.log, "vault operation", err, vaultTexts)
}
