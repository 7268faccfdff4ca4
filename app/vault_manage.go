package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// The credential lifecycle (edit, rotate, overlap warnings), the
// passphrase, backups and the wait for the OS keyring. Secrets and
// passphrases only travel inward; every answer is a redacted view.

// keyringWait gives a call that may wait on the OS keyring a context that
// CancelKeyringWait ends. done releases it.
func (s *VaultService) keyringWait() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	s.keyringMu.Lock()
	if s.stopKeyring != nil {
		s.stopKeyring() // one wait at a time: a new one supersedes the last
	}
	s.stopKeyring = cancel
	s.keyringMu.Unlock()
	return ctx, func() {
		s.keyringMu.Lock()
		cancel()
		s.stopKeyring = nil
		s.keyringMu.Unlock()
	}
}

// CancelKeyringWait stops waiting for the OS keyring (which may be showing
// its own dialog): the call that waited returns at once and changes nothing.
func (s *VaultService) CancelKeyringWait() {
	s.keyringMu.Lock()
	if s.stopKeyring != nil {
		s.stopKeyring()
	}
	s.keyringMu.Unlock()
}

// UpdateCredential changes a credential's name, bindings, injection and
// approval mode; its secret stays. version is the one the form was made
// from.
func (s *VaultService) UpdateCredential(id string, version int64, form CredentialEditForm) (CredentialView, error) {
	if version < 1 {
		return CredentialView{}, shown("This credential changed since the form was opened; open it again.")
	}
	c, err := s.vault.Credentials().Update(id, uint64(version), form.toVault())
	if err != nil {
		return CredentialView{}, s.publicError(err)
	}
	return credentialView(c), nil
}

// RotateSecret replaces a credential's secret. The new secret is
// write-only like the first; agents' next calls use it.
func (s *VaultService) RotateSecret(id string, version int64, secret string) (CredentialView, error) {
	if version < 1 {
		return CredentialView{}, shown("This credential changed since the form was opened; open it again.")
	}
	sec := vault.NewSecret([]byte(secret))
	defer sec.Wipe()
	c, err := s.vault.Credentials().Rotate(id, uint64(version), sec)
	if err != nil {
		return CredentialView{}, s.publicError(err)
	}
	return credentialView(c), nil
}

// CheckBindings says which stored credentials the hosts and paths of a
// credential being added (except "") or edited (except its id) would
// duplicate or overlap, and which one an agent's call would use.
func (s *VaultService) CheckBindings(hosts, paths []string, except string) ([]BindingOverlap, error) {
	list, err := s.vault.Credentials().CheckBindings(hosts, paths, except)
	if err != nil {
		return nil, s.publicError(err)
	}
	out := make([]BindingOverlap, 0, len(list))
	for _, o := range list {
		out = append(out, overlapView(o))
	}
	return out, nil
}

// ChangePassphrase replaces the vault passphrase; current is asked again.
func (s *VaultService) ChangePassphrase(current, next string) (PassphraseChangeView, error) {
	cur, nxt := vault.Passphrase(current), vault.Passphrase(next)
	defer wipe(cur)
	defer wipe(nxt)
	ctx, done := s.keyringWait()
	defer done()
	res, err := s.vault.ChangePassphrase(ctx, cur, nxt)
	if err != nil {
		return PassphraseChangeView{}, s.publicError(err)
	}
	return PassphraseChangeView{KeyringRewrapped: res.KeyringRewrapped, KeyringCleared: res.KeyringCleared, Status: s.Status()}, nil
}

// backupExtension names Yett backups; the dialogs offer it.
const backupExtension = ".yettbackup"

// ExportBackup asks where to save, then writes an encrypted backup that
// opens with the passphrase given (checked first). Cancelling the dialog
// is saved=false.
func (s *VaultService) ExportBackup(passphrase string) (BackupExport, error) {
	p := vault.Passphrase(passphrase)
	defer wipe(p)
	name := fmt.Sprintf("yett-%s%s", time.Now().Format("2006-01-02"), backupExtension)
	path, err := s.fileDialogs().save("Save an encrypted backup of the vault", name)
	if err != nil {
		s.log.Error("backup save dialog", "err", err)
		return BackupExport{}, shown("Yett could not show where to save the backup.")
	}
	if path == "" {
		return BackupExport{}, nil
	}
	if err := s.vault.ExportBackup(p, path); err != nil {
		return BackupExport{}, s.publicError(err)
	}
	fi, err := os.Stat(path)
	size := int64(0)
	if err == nil {
		size = fi.Size()
	}
	return BackupExport{Saved: true, Path: path, Size: size}, nil
}

// SetBackupReminderDays sets after how many days without a backup Yett
// reminds (0 turns the reminder off).
func (s *VaultService) SetBackupReminderDays(days int) (VaultStatus, error) {
	if days < 0 || days > vault.MaxBackupReminderDays {
		return s.Status(), shown(fmt.Sprintf("The reminder is 1 to %d days, or off.", vault.MaxBackupReminderDays))
	}
	if err := s.vault.SetBackupReminderDays(days); err != nil {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}

// ChooseBackup asks which backup file to restore; chosen=false when the
// person cancels. Nothing is read but the file's name, size and time.
func (s *VaultService) ChooseBackup() (BackupChoice, error) {
	path, err := s.fileDialogs().open("Choose a Yett backup to restore")
	if err != nil {
		s.log.Error("backup open dialog", "err", err)
		return BackupChoice{}, shown("Yett could not show the files to choose from.")
	}
	if path == "" {
		return BackupChoice{}, nil
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return BackupChoice{}, shown("That file cannot be read.")
	}
	return BackupChoice{Chosen: true, Path: path, Name: filepath.Base(path), Size: fi.Size(),
		Modified: fi.ModTime().UTC().Format(time.RFC3339)}, nil
}

// RestoreBackup replaces the vault's contents with the backup at path and
// unlocks it with the backup's passphrase. A wrong passphrase or a file
// that is not a backup changes nothing.
func (s *VaultService) RestoreBackup(path, passphrase string) (VaultStatus, error) {
	p := vault.Passphrase(passphrase)
	defer wipe(p)
	if path == "" {
		return s.Status(), shown("Choose a backup file first.")
	}
	if err := s.vault.RestoreBackup(path, p); err != nil {
		return s.Status(), s.publicError(err)
	}
	return s.Status(), nil
}
