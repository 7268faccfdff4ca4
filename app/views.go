package app

import (
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// VaultStatus is what the UI knows about the vault. It carries no key
// material and no secret.
type VaultStatus struct {
	State            string `json:"state" enum:"VaultState"`
	Epoch            uint64 `json:"epoch"`
	KeyringEnabled   bool   `json:"keyringEnabled"`
	KeyringAvailable bool   `json:"keyringAvailable"`
	KeyringNote      string `json:"keyringNote"`
	AutoLockMinutes  int    `json:"autoLockMinutes"`
	LockDeadline     string `json:"lockDeadline"`
	Damaged          string `json:"damaged"`
	RetryAfterMs     int64  `json:"retryAfterMs"`
	KDF              string `json:"kdf"`
	// RotationsDue counts the credentials whose rotation reminder has come
	// due (0 while locked).
	RotationsDue int `json:"rotationsDue"`
	// LastBackupAt and LastBackupPath are the last encrypted backup this
	// vault recorded ("" for none, and while locked).
	LastBackupAt   string `json:"lastBackupAt"`
	LastBackupPath string `json:"lastBackupPath"`
	// BackupReminderDays is how many days without a backup make Yett
	// remind (0: off); BackupDue says it does now.
	BackupReminderDays int  `json:"backupReminderDays"`
	BackupDue          bool `json:"backupDue"`
}

// CredentialView is a stored credential as the UI may see it: everything
// but the secret.
type CredentialView struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Format       string   `json:"format" enum:"CredentialFormat"`
	HeaderName   string   `json:"headerName"`
	Template     string   `json:"template"`
	Username     string   `json:"username"`
	Hosts        []string `json:"hosts"`
	PathPrefixes []string `json:"pathPrefixes"`
	Approval     string   `json:"approval" enum:"ApprovalMode"`
	CreatedAt    string   `json:"createdAt"`
	// UpdatedAt: the last edit or rotation; SecretSetAt: when the current
	// secret was entered.
	UpdatedAt   string `json:"updatedAt"`
	SecretSetAt string `json:"secretSetAt"`
	Version     int64  `json:"version"`
	// RotateEveryDays is the rotation reminder (0: none); RotationDueAt
	// when it falls due ("" without one); RotationDue says it has, as of
	// the answer.
	RotateEveryDays int    `json:"rotateEveryDays"`
	RotationDueAt   string `json:"rotationDueAt"`
	RotationDue     bool   `json:"rotationDue"`
	// OverlapsWith names the other credentials whose bindings cover some
	// of the same requests (ListCredentials fills it).
	OverlapsWith []string `json:"overlapsWith"`
}

// CredentialEditForm is the edit form: everything but the secret.
type CredentialEditForm struct {
	Name         string   `json:"name"`
	Format       string   `json:"format" enum:"CredentialFormat"`
	HeaderName   string   `json:"headerName"`
	Template     string   `json:"template"`
	Username     string   `json:"username"`
	Hosts        []string `json:"hosts"`
	PathPrefixes []string `json:"pathPrefixes"`
	Approval     string   `json:"approval" enum:"ApprovalMode"`
	// RotateEveryDays: remind to rotate the secret this many days after
	// it was entered (0: never).
	RotateEveryDays int `json:"rotateEveryDays"`
}

// BindingOverlap is another credential whose bindings meet a candidate's,
// and who an agent's call to Example would use: "candidate" (the one being
// saved), "other", "third" (WinnerName) or "none" (equally specific: the
// call is refused until one is narrowed).
type BindingOverlap struct {
	OtherID    string `json:"otherId"`
	OtherName  string `json:"otherName"`
	Duplicate  bool   `json:"duplicate"`
	Host       string `json:"host"`
	Path       string `json:"path"`
	Example    string `json:"example"`
	Winner     string `json:"winner" enum:"OverlapWinner"`
	WinnerName string `json:"winnerName"`
}

// PassphraseChangeView is what changing the passphrase did.
type PassphraseChangeView struct {
	KeyringRewrapped bool        `json:"keyringRewrapped"`
	KeyringCleared   bool        `json:"keyringCleared"`
	Status           VaultStatus `json:"status"`
}

// BackupExport: where the backup went; Saved is false when the person
// cancelled the dialog.
type BackupExport struct {
	Saved bool   `json:"saved"`
	Path  string `json:"path"`
	Size  int64  `json:"size"`
}

// BackupChoice is the file chosen to restore.
type BackupChoice struct {
	Chosen   bool   `json:"chosen"`
	Path     string `json:"path"`
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
}

// NewCredentialForm is the add-credential form. Secret only travels inward.
type NewCredentialForm struct {
	Name         string   `json:"name"`
	Secret       string   `json:"secret"`
	Format       string   `json:"format" enum:"CredentialFormat"`
	HeaderName   string   `json:"headerName"`
	Template     string   `json:"template"`
	Username     string   `json:"username"`
	Hosts        []string `json:"hosts"`
	PathPrefixes []string `json:"pathPrefixes"`
	Approval     string   `json:"approval" enum:"ApprovalMode"`
	// RotateEveryDays: remind to rotate the secret this many days after
	// it was entered (0: never).
	RotateEveryDays int `json:"rotateEveryDays"`
	// Owner, BackupRevoker and Environment are who answers for it and
	// where it serves: the owner inventory keeps them ("" leaves one
	// unset), so a credential added with all three is under control.
	Owner         string `json:"owner"`
	BackupRevoker string `json:"backupRevoker"`
	Environment   string `json:"environment" enum:"Environment"`
}

func statusView(s vault.Status, r vault.Reminders, hasKeyring bool) VaultStatus {
	v := VaultStatus{
		State:            string(s.State),
		Epoch:            s.Epoch,
		KeyringEnabled:   s.KeyringEnabled,
		KeyringAvailable: hasKeyring && s.KeyringNote == "",
		KeyringNote:      s.KeyringNote,
		AutoLockMinutes:  int(s.AutoLockAfter / time.Minute),
		Damaged:          s.Damaged,
		RetryAfterMs:     s.RetryAfter.Milliseconds(),
		KDF:              s.KDF,
	}
	if !s.LockDeadline.IsZero() {
		v.LockDeadline = s.LockDeadline.UTC().Format(time.RFC3339)
	}
	v.RotationsDue, v.LastBackupPath = r.RotationsDue, r.Backup.LastPath
	v.BackupReminderDays, v.BackupDue = r.Backup.ReminderDays, r.Backup.Due
	if !r.Backup.LastAt.IsZero() {
		v.LastBackupAt = r.Backup.LastAt.UTC().Format(time.RFC3339)
	}
	return v
}

func credentialView(c vault.CredentialView) CredentialView {
	v := CredentialView{
		ID:           c.ID,
		Name:         c.Name,
		Format:       string(c.Injection.Format),
		HeaderName:   c.Injection.HeaderName,
		Template:     c.Injection.Template,
		Username:     c.Injection.Username,
		Hosts:        nonNil(c.Hosts),
		PathPrefixes: nonNil(c.PathPrefixes),
		Approval:     string(c.Approval),
		CreatedAt:    c.CreatedAt.UTC().Format(time.RFC3339),
		UpdatedAt:    c.UpdatedAt.UTC().Format(time.RFC3339),
		SecretSetAt:  c.SecretSetAt.UTC().Format(time.RFC3339),
		Version:      int64(c.Version),
		OverlapsWith: []string{},

		RotateEveryDays: c.RotateEveryDays,
		RotationDue:     c.RotationDue,
	}
	if !c.RotationDueAt.IsZero() {
		v.RotationDueAt = c.RotationDueAt.UTC().Format(time.RFC3339)
	}
	return v
}

func (f CredentialEditForm) toVault() vault.CredentialEdit {
	return vault.CredentialEdit{
		Name: f.Name,
		Injection: vault.Injection{
			Format:     vault.InjectionFormat(f.Format),
			HeaderName: f.HeaderName,
			Template:   f.Template,
			Username:   f.Username,
		},
		Hosts:           f.Hosts,
		PathPrefixes:    f.PathPrefixes,
		Approval:        vault.Approval(f.Approval),
		RotateEveryDays: f.RotateEveryDays,
	}
}

func overlapView(o vault.Overlap) BindingOverlap {
	return BindingOverlap{
		OtherID: o.Other.ID, OtherName: o.Other.Name, Duplicate: o.Duplicate, Host: o.Host, Path: o.Path,
		Example: o.Example, Winner: string(o.Winner), WinnerName: o.WinnerName,
	}
}

func (f NewCredentialForm) toVault() vault.NewCredential {
	return vault.NewCredential{
		Name:   f.Name,
		Secret: vault.NewSecret([]byte(f.Secret)),
		Injection: vault.Injection{
			Format:     vault.InjectionFormat(f.Format),
			HeaderName: f.HeaderName,
			Template:   f.Template,
			Username:   f.Username,
		},
		Hosts:           f.Hosts,
		PathPrefixes:    f.PathPrefixes,
		Approval:        vault.Approval(f.Approval),
		RotateEveryDays: f.RotateEveryDays,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
