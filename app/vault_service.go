package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// VaultService is bound to the UI as window.go.app.VaultService. Every
// method returns redacted views; passphrases and secrets only ever travel
// from the UI into the vault, never back.
type VaultService struct {
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
}

func newVaultService(v *vault.Vault, events *eventSink, log *slog.Logger, hasKeyring bool) *VaultService {
	s := &VaultService{vault: v, events: events, log: log, hasKeyring: hasKeyring, dialogs: noDialogs()}
	s.cancel = v.Subscribe(func(vault.Event) { s.events.send(EventVaultStatus, s.Status()) })
	return s
}

func (s *VaultService) close() {
	if s != nil && s.cancel != nil {
		s.cancel()
	}
}

// Status reports the vault's state for the UI.
func (s *VaultService) Status() VaultStatus { return statusView(s.vault.Status(), s.hasKeyring) }

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
		return s.Status(), errors.New("Auto-lock must be between 1 minute and 7 days.")
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
	list, err := s.vault.ListCredentials()
	if err != nil {
		return nil, s.publicError(err)
	}
	out := make([]CredentialView, 0, len(list))
	for _, c := range list {
		v := credentialView(c)
		if overlaps, err := s.vault.CheckBindings(c.Hosts, c.PathPrefixes, c.ID); err == nil {
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
	c, err := s.vault.AddCredential(nc)
	if err != nil {
		return CredentialView{}, s.publicError(err)
	}
	return credentialView(c), nil
}

// RemoveCredential deletes a credential.
func (s *VaultService) RemoveCredential(id string) error {
	return s.publicError(s.vault.RemoveCredential(id))
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

// publicErrors are the vault's errors whose messages are written for a
// person (the vault guarantees none quotes a passphrase or secret).
var publicErrors = []error{
	vault.ErrAlreadyInitialised, vault.ErrNotInitialised, vault.ErrLocked,
	vault.ErrWrongPassphrase, vault.ErrWeakPassphrase, vault.ErrDamaged,
	vault.ErrKeyringUnavailable, vault.ErrKeyringNotEnabled, vault.ErrKeyringKeyMissing,
	vault.ErrInvalid, vault.ErrNotFound, vault.ErrClosed,
	vault.ErrKeyringCancelled, vault.ErrCredentialChanged, vault.ErrNotABackup,
}

// publicError chooses the text the UI shows for err. The vault's documented
// errors keep their wording (without the "vault: " prefix); anything else is
// logged and becomes a generic message, because an internal error's text is
// not written for users.
func (s *VaultService) publicError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, vault.ErrCredentialChanged) {
		return errors.New("This credential changed since the form was opened (another window or yett serve changed it). Close the form and open it again.")
	}
	var throttled *vault.ThrottledError
	if errors.As(err, &throttled) {
		secs := int((throttled.RetryAfter + time.Second - 1) / time.Second)
		return fmt.Errorf("Too many wrong passphrases. Try again in %d s.", secs)
	}
	for _, pe := range publicErrors {
		if errors.Is(err, pe) {
			return errors.New(sentence(strings.TrimPrefix(err.Error(), "vault: ")))
		}
	}
	s.log.Error("vault operation failed", "err", err)
	return errors.New("Yett could not complete this. Details are in the Yett log.")
}

// sentence capitalises the first letter and ends the text with a period.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}
