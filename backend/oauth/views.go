package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// AuthorizationView is one inventory row for the UI and the CLI. It holds
// no token, secret or key.
type AuthorizationView struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	Provider         string    `json:"provider"`
	ProviderHost     string    `json:"provider_host"`
	AccountRef       string    `json:"account_ref"`
	Scopes           []string  `json:"scopes"`
	Owner            string    `json:"owner"`
	BackupRevoker    string    `json:"backup_revoker"`
	Environment      string    `json:"environment"`
	CreatedHow       string    `json:"created_how"`
	ConnectedAt      time.Time `json:"connected_at"`
	LastRefresh      time.Time `json:"last_refresh"`
	LastUsed         time.Time `json:"last_used"`
	ReviewBy         time.Time `json:"review_by"`
	DisableProcedure string    `json:"disable_procedure"`
	State            string    `json:"state"`
	StateReason      string    `json:"state_reason"`
	Revocation       string    `json:"revocation"`
	Unattended       bool      `json:"unattended"`
	DPoP             bool      `json:"dpop"`
	ClientAuth       string    `json:"client_auth"`
	// Controlled is false when the owner or the backup revoker is missing:
	// then nobody is known to answer for the authorization.
	Controlled bool     `json:"controlled"`
	Problems   []string `json:"problems"`
	// Endpoints are the provider's token, authorization and device
	// endpoints it uses (those it has); RevocationHost is the host of its
	// revocation endpoint, "" when it has none.
	Endpoints      []string `json:"endpoints"`
	RevocationHost string   `json:"revocation_host"`
}

func controlled(r *row) bool { return r.Owner != "" && r.BackupRevoker != "" }

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// DefaultDisableProcedure is shown when the person wrote none.
const DefaultDisableProcedure = "In Yett: Connections, Revoke. Yett disables it locally at once, then revokes it at the provider and verifies."

func (m *Manager) view(r *row) AuthorizationView {
	v := AuthorizationView{
		ID: r.ID, Name: r.Name, Provider: r.Provider, ProviderHost: hostOf(r.TokenEndpoint), AccountRef: r.AccountRef,
		Scopes: splitScopes(r.Scopes), Owner: r.Owner, BackupRevoker: r.BackupRevoker, Environment: r.Environment,
		CreatedHow: r.CreatedHow, ConnectedAt: fromUnix(r.ConnectedAt), LastRefresh: fromUnix(r.LastRefresh),
		LastUsed: fromUnix(r.LastUsed), ReviewBy: fromUnix(r.ReviewBy), DisableProcedure: r.DisableProcedure,
		State: r.State, StateReason: r.StateReason, Revocation: r.Revocation,
		Unattended: r.Unattended, DPoP: r.DPoP, ClientAuth: r.ClientAuth, Controlled: controlled(r),
	}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	v.RevocationHost = hostOf(r.RevocationEndpoint)
	v.Endpoints = []string{}
	for _, e := range []string{r.TokenEndpoint, r.AuthorizationEndpoint, r.DeviceEndpoint} {
		if e != "" {
			v.Endpoints = append(v.Endpoints, e)
		}
	}
	if v.DisableProcedure == "" {
		v.DisableProcedure = DefaultDisableProcedure
	}
	if r.Owner == "" {
		v.Problems = append(v.Problems, "no owner: nobody is named who answers for this account")
	}
	if r.BackupRevoker == "" {
		v.Problems = append(v.Problems, "no backup revoker: nobody else is named who may revoke it")
	}
	if r.AccountRef == "" && r.State == StateActive {
		v.Problems = append(v.Problems, "the provider did not say which account was connected")
	}
	if r.Unattended && r.ReviewBy == 0 {
		v.Problems = append(v.Problems, "unattended access without an expiry review date")
	}
	if r.ReviewBy != 0 && m.now().Unix() > r.ReviewBy {
		v.Problems = append(v.Problems, "its expiry review date has passed")
	}
	if v.Problems == nil {
		v.Problems = []string{}
	}
	return v
}

// Authorizations lists the inventory, newest first.
func (m *Manager) Authorizations() ([]AuthorizationView, error) {
	var rows []row
	if err := m.db.Order("connected_at DESC, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	out := make([]AuthorizationView, 0, len(rows))
	for i := range rows {
		out = append(out, m.view(&rows[i]))
	}
	return out, nil
}

// Authorization returns one row's view.
func (m *Manager) Authorization(id string) (AuthorizationView, error) {
	r, err := loadRow(m.db, id)
	if err != nil {
		return AuthorizationView{}, notFound(err)
	}
	return m.view(r), nil
}

// AuthorizationExists says whether authorization id is in the inventory,
// in any state.
func (m *Manager) AuthorizationExists(id string) (bool, error) {
	_, err := loadRow(m.db, id)
	if errors.Is(err, errNoAuthorization) {
		return false, nil
	}
	return err == nil, err
}

// Inventory is what a person may edit on a row after connecting.
type Inventory struct {
	Owner            string
	BackupRevoker    string
	ReviewBy         time.Time
	DisableProcedure string
}

// UpdateInventory sets a row's owner, backup revoker, review date and
// local disable procedure.
func (m *Manager) UpdateInventory(id string, inv Inventory) error {
	for _, f := range []struct{ name, v string }{{"owner", inv.Owner}, {"backup revoker", inv.BackupRevoker}, {"disable procedure", inv.DisableProcedure}} {
		if err := checkText(f.name, f.v, 0, 512); err != nil {
			return err
		}
	}
	res := m.db.Model(&row{}).Where("id = ?", id).Updates(map[string]any{
		"owner": strings.TrimSpace(inv.Owner), "backup_revoker": strings.TrimSpace(inv.BackupRevoker),
		"review_by": unixOf(inv.ReviewBy), "disable_procedure": inv.DisableProcedure,
	})
	if res.Error != nil {
		return fmt.Errorf("oauth: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	m.changed()
	return nil
}

// Settings are the custody policy switches.
type Settings struct {
	// BlockUncontrolled refuses operations of authorizations without an
	// owner or backup revoker; off (the default) only warns.
	BlockUncontrolled bool `json:"block_uncontrolled"`
}

func (m *Manager) blockUncontrolled() bool {
	var on bool
	m.db.Raw(`SELECT block_uncontrolled FROM oauth_settings WHERE id = 1`).Scan(&on)
	return on
}

// Settings returns the policy switches.
func (m *Manager) Settings() Settings { return Settings{BlockUncontrolled: m.blockUncontrolled()} }

// SetBlockUncontrolled sets the switch.
func (m *Manager) SetBlockUncontrolled(on bool) error {
	if err := m.db.Exec(`UPDATE oauth_settings SET block_uncontrolled = ? WHERE id = 1`, on).Error; err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	m.changed()
	return nil
}
