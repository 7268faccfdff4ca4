package app

import (
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// VaultStatus is what the UI knows about the vault. It carries no key
// material and no secret.
type VaultStatus struct {
	State            string `json:"state"`
	Epoch            uint64 `json:"epoch"`
	KeyringEnabled   bool   `json:"keyringEnabled"`
	KeyringAvailable bool   `json:"keyringAvailable"`
	KeyringNote      string `json:"keyringNote"`
	AutoLockMinutes  int    `json:"autoLockMinutes"`
	LockDeadline     string `json:"lockDeadline"`
	Damaged          string `json:"damaged"`
	RetryAfterMs     int64  `json:"retryAfterMs"`
	KDF              string `json:"kdf"`
}

// CredentialView is a stored credential as the UI may see it: everything
// but the secret.
type CredentialView struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Format       string   `json:"format"`
	HeaderName   string   `json:"headerName"`
	Template     string   `json:"template"`
	Username     string   `json:"username"`
	Hosts        []string `json:"hosts"`
	PathPrefixes []string `json:"pathPrefixes"`
	Approval     string   `json:"approval"`
	CreatedAt    string   `json:"createdAt"`
	Version      int64    `json:"version"`
}

// NewCredentialForm is the add-credential form. Secret only travels inward.
type NewCredentialForm struct {
	Name         string   `json:"name"`
	Secret       string   `json:"secret"`
	Format       string   `json:"format"`
	HeaderName   string   `json:"headerName"`
	Template     string   `json:"template"`
	Username     string   `json:"username"`
	Hosts        []string `json:"hosts"`
	PathPrefixes []string `json:"pathPrefixes"`
	Approval     string   `json:"approval"`
}

func statusView(s vault.Status, hasKeyring bool) VaultStatus {
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
	return v
}

func credentialView(c vault.CredentialView) CredentialView {
	return CredentialView{
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
		Version:      int64(c.Version),
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
		Hosts:        f.Hosts,
		PathPrefixes: f.PathPrefixes,
		Approval:     vault.Approval(f.Approval),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
