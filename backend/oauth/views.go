package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/yettdev/yett/backend/store"
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
	Environment      string    `json:"environment"`
	CreatedHow       string    `json:"created_how"`
	ConnectedAt      time.Time `json:"connected_at"`
	LastRefresh      time.Time `json:"last_refresh"`
	LastUsed         time.Time `json:"last_used"`
	DisableProcedure string    `json:"disable_procedure"`
	// APIHosts are where its token may be sent (APIHosts).
	APIHosts []string `json:"api_hosts"`
	// Resource is the resource its tokens are for (RFC 8707): an upstream
	// MCP server's URL; "" for none.
	Resource    string `json:"resource"`
	State       string `json:"state"`
	StateReason string `json:"state_reason"`
	Revocation  string `json:"revocation"`
	Unattended  bool   `json:"unattended"`
	DPoP        bool   `json:"dpop"`
	ClientAuth  string `json:"client_auth"`
	// Problems are custody's own (who answers for it, its review date
	// and whether it is under control are the owner inventory's:
	// backend/inventory).
	Problems []string `json:"problems"`
	// Endpoints are the provider's token, authorization and device
	// endpoints it uses (those it has); RevocationHost is the host of its
	// revocation endpoint, "" when it has none.
	Endpoints      []string `json:"endpoints"`
	RevocationHost string   `json:"revocation_host"`
	// RevocationEndpoint and IntrospectionEndpoint are where it is revoked
	// and verified (SetEndpoints changes them); "" for none. Waiting counts
	// its tokens still waiting in the revocation queue.
	RevocationEndpoint    string `json:"revocation_endpoint"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
	Waiting               int    `json:"waiting"`
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// DefaultDisableProcedure is shown when the person wrote none.
const DefaultDisableProcedure = "In Yett: Connections, Revoke. Yett disables it locally at once, then revokes it at the provider and verifies."

func (m *Custody) view(r *row) AuthorizationView {
	v := AuthorizationView{
		ID: r.ID, Name: r.Name, Provider: r.Provider, ProviderHost: hostOf(r.TokenEndpoint), AccountRef: r.AccountRef,
		Scopes: splitScopes(r.Scopes), Environment: r.Environment,
		CreatedHow: r.CreatedHow, ConnectedAt: store.FromUnixSeconds(r.ConnectedAt), LastRefresh: store.FromUnixSeconds(r.LastRefresh),
		LastUsed: store.FromUnixSeconds(r.LastUsed), DisableProcedure: r.DisableProcedure,
		State: r.State, StateReason: r.StateReason, Revocation: r.Revocation,
		Unattended: r.Unattended, DPoP: r.DPoP, ClientAuth: r.ClientAuth, APIHosts: []string{}, Resource: r.Resource,
	}
	for _, h := range apiHostsOf(r) {
		v.APIHosts = append(v.APIHosts, string(h))
	}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	v.RevocationHost = hostOf(r.RevocationEndpoint)
	v.RevocationEndpoint, v.IntrospectionEndpoint = r.RevocationEndpoint, r.IntrospectionEndpoint
	v.Endpoints = []string{}
	for _, e := range []string{r.TokenEndpoint, r.AuthorizationEndpoint, r.DeviceEndpoint} {
		if e != "" {
			v.Endpoints = append(v.Endpoints, e)
		}
	}
	if v.DisableProcedure == "" {
		v.DisableProcedure = DefaultDisableProcedure
	}
	if r.AccountRef == "" && r.State == StateActive {
		v.Problems = append(v.Problems, "the provider did not say which account was connected")
	}
	if v.Problems == nil {
		v.Problems = []string{}
	}
	return v
}

// Authorizations lists the inventory, newest first.
func (m *Custody) Authorizations() ([]AuthorizationView, error) {
	var rows []row
	if err := m.db.Order("connected_at DESC, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	waiting, err := m.waiting("")
	if err != nil {
		return nil, err
	}
	out := make([]AuthorizationView, 0, len(rows))
	for i := range rows {
		v := m.view(&rows[i])
		v.Waiting = waiting[v.ID]
		out = append(out, v)
	}
	return out, nil
}

// waiting counts the tokens in the revocation queue by authorization
// (only id's when id is not "").
func (m *Custody) waiting(id string) (map[string]int, error) {
	var counts []struct {
		AuthorizationID string
		N               int
	}
	q := m.db.Table("oauth_revocations").Select("authorization_id, COUNT(*) AS n").Group("authorization_id")
	if id != "" {
		q = q.Where("authorization_id = ?", id)
	}
	if err := q.Scan(&counts).Error; err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	out := make(map[string]int, len(counts))
	for _, c := range counts {
		out[c.AuthorizationID] = c.N
	}
	return out, nil
}

// Authorization returns one row's view.
func (m *Custody) Authorization(id string) (AuthorizationView, error) {
	r, err := loadRow(m.db, id)
	if err != nil {
		return AuthorizationView{}, notFound(err)
	}
	waiting, err := m.waiting(id)
	if err != nil {
		return AuthorizationView{}, err
	}
	v := m.view(r)
	v.Waiting = waiting[id]
	return v, nil
}

// AuthorizationExists says whether authorization id is in the inventory,
// in any state.
func (m *Custody) AuthorizationExists(id string) (bool, error) {
	_, err := loadRow(m.db, id)
	if errors.Is(err, errNoAuthorization) {
		return false, nil
	}
	return err == nil, err
}

// Declaration is who the person said answers for an authorization when
// connecting it. The owner inventory (backend/inventory) takes it over the
// first time it sees the authorization and holds it from then on; custody
// never changes it, shows it or decides anything from it.
type Declaration struct {
	Owner         string
	BackupRevoker string
	ReviewBy      time.Time
}

// Declarations are the declarations made at connection, by authorization.
func (m *Custody) Declarations() (map[string]Declaration, error) {
	var rows []row
	if err := m.db.Select("id", "owner", "backup_revoker", "review_by").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	out := make(map[string]Declaration, len(rows))
	for _, r := range rows {
		out[r.ID] = Declaration{Owner: r.Owner, BackupRevoker: r.BackupRevoker, ReviewBy: store.FromUnixSeconds(r.ReviewBy)}
	}
	return out, nil
}

// SetDisableProcedure sets the local disable procedure a person wrote for
// an authorization (shown on its card), "" for the default.
func (m *Custody) SetDisableProcedure(id, text string) error {
	if err := checkText("disable procedure", text, 0, 512); err != nil {
		return err
	}
	res := m.db.Model(&row{}).Where("id = ?", id).Update("disable_procedure", text)
	if res.Error != nil {
		return fmt.Errorf("oauth: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	m.changed()
	return nil
}
