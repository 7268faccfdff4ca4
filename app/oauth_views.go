package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/oauth/providers"
	"github.com/yettdev/yett/backend/operation"
)

// The OAuth views are what frontend/src/lib/backend.ts parses: camelCase
// keys, times as RFC 3339 in UTC ("" for none), lists never null. None has
// a field that could hold a token, a client secret or a private key.

// PresetView is a provider Yett knows by name.
type PresetView struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	DefaultScopes []string `json:"defaultScopes"`
	Tenant        bool     `json:"tenant"`
	Notes         string   `json:"notes"`
	HasDevice     bool     `json:"hasDevice"`
	HasRevocation bool     `json:"hasRevocation"`
	// APIHosts are where the provider's API is: its accounts' operations
	// may send their tokens only there.
	APIHosts []string `json:"apiHosts"`
}

// DiscoveryView is an issuer's checked metadata.
type DiscoveryView struct {
	Issuer                      string   `json:"issuer"`
	AuthorizationEndpoint       string   `json:"authorizationEndpoint"`
	TokenEndpoint               string   `json:"tokenEndpoint"`
	RevocationEndpoint          string   `json:"revocationEndpoint"`
	IntrospectionEndpoint       string   `json:"introspectionEndpoint"`
	DeviceAuthorizationEndpoint string   `json:"deviceAuthorizationEndpoint"`
	ScopesSupported             []string `json:"scopesSupported"`
	// DPoP: the issuer accepts ES256 proofs, the only kind Yett makes.
	DPoP        bool     `json:"dpop"`
	AuthMethods []string `json:"authMethods"`
}

// ClientKeyView is a private_key_jwt key's public half.
type ClientKeyView struct {
	KeyID     string `json:"keyId"`
	PublicJWK string `json:"publicJwk"`
	JWKS      string `json:"jwks"`
}

// ConnectForm is the connect-an-account form. ClientSecret only travels
// inward: it is sealed at once and never returned, logged or printed (the
// form redacts itself for fmt and slog).
type ConnectForm struct {
	Name                        string   `json:"name"`
	Provider                    string   `json:"provider" enum:"OAuthProvider"`
	Tenant                      string   `json:"tenant"`
	Issuer                      string   `json:"issuer"`
	AuthorizationEndpoint       string   `json:"authorizationEndpoint"`
	TokenEndpoint               string   `json:"tokenEndpoint"`
	RevocationEndpoint          string   `json:"revocationEndpoint"`
	IntrospectionEndpoint       string   `json:"introspectionEndpoint"`
	DeviceAuthorizationEndpoint string   `json:"deviceAuthorizationEndpoint"`
	ClientID                    string   `json:"clientId"`
	ClientAuth                  string   `json:"clientAuth" enum:"ClientAuth"`
	ClientSecret                string   `json:"clientSecret"`
	ClientKeyID                 string   `json:"clientKeyId"`
	Scopes                      []string `json:"scopes"`
	Environment                 string   `json:"environment" enum:"Environment"`
	Unattended                  bool     `json:"unattended"`
	Flow                        string   `json:"flow" enum:"GrantFlow"`
	Owner                       string   `json:"owner"`
	BackupRevoker               string   `json:"backupRevoker"`
	ReviewBy                    string   `json:"reviewBy"`
	DisableProcedure            string   `json:"disableProcedure"`
	DPoP                        bool     `json:"dpop"`
	// APIHosts are the hosts of the account's API, where its named
	// operations may send its token; empty: the preset's, or the
	// provider's own.
	APIHosts []string `json:"apiHosts,omitempty"`
}

// String keeps the secret out of any %v.
func (f ConnectForm) String() string {
	return fmt.Sprintf("ConnectForm{name=%q provider=%q flow=%q clientSecret=REDACTED}", f.Name, f.Provider, f.Flow)
}

// LogValue keeps the secret out of any log line.
func (f ConnectForm) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", f.Name), slog.String("provider", f.Provider), slog.String("flow", f.Flow))
}

var connectProviders = []string{"github", "google", "gitlab", "microsoft", "slack", "atlassian", "custom"}

// request converts the form. The returned request holds the secret's only
// copy the caller must wipe.
func (f ConnectForm) request() (oauth.ConnectRequest, error) {
	var secret []byte
	if f.ClientSecret != "" {
		secret = []byte(f.ClientSecret)
	}
	req := oauth.ConnectRequest{ClientSecret: secret}
	if !slices.Contains(connectProviders, f.Provider) {
		return req, shown("Choose a provider, or custom.")
	}
	reviewBy, err := parseDay("review date", f.ReviewBy)
	if err != nil {
		return req, err
	}
	req.Name, req.Provider, req.Tenant = strings.TrimSpace(f.Name), f.Provider, strings.TrimSpace(f.Tenant)
	req.Endpoints = oauth.Endpoints{
		Issuer:                      strings.TrimSpace(f.Issuer),
		AuthorizationEndpoint:       strings.TrimSpace(f.AuthorizationEndpoint),
		TokenEndpoint:               strings.TrimSpace(f.TokenEndpoint),
		RevocationEndpoint:          strings.TrimSpace(f.RevocationEndpoint),
		IntrospectionEndpoint:       strings.TrimSpace(f.IntrospectionEndpoint),
		DeviceAuthorizationEndpoint: strings.TrimSpace(f.DeviceAuthorizationEndpoint),
	}
	req.ClientID, req.ClientAuth, req.ClientKeyID = strings.TrimSpace(f.ClientID), f.ClientAuth, f.ClientKeyID
	for _, sc := range f.Scopes {
		if sc = strings.TrimSpace(sc); sc != "" {
			req.Scopes = append(req.Scopes, sc)
		}
	}
	req.Environment, req.Unattended, req.Flow = f.Environment, f.Unattended, f.Flow
	req.Owner, req.BackupRevoker, req.ReviewBy = f.Owner, f.BackupRevoker, reviewBy
	req.DisableProcedure, req.DPoP = f.DisableProcedure, f.DPoP
	for _, h := range f.APIHosts {
		if h = strings.TrimSpace(h); h != "" {
			req.APIHosts = append(req.APIHosts, h)
		}
	}
	return req, nil
}

// FlowView is a connection flow's state. AuthorizationURL carries PKCE and
// state parameters, not a token; it is cleared once the flow ends.
type FlowView struct {
	FlowID                  string `json:"flowId"`
	Flow                    string `json:"flow" enum:"GrantFlow"`
	State                   string `json:"state" enum:"FlowState"`
	AuthorizationURL        string `json:"authorizationUrl"`
	UserCode                string `json:"userCode"`
	VerificationURI         string `json:"verificationUri"`
	VerificationURIComplete string `json:"verificationUriComplete"`
	ExpiresAt               string `json:"expiresAt"`
	AuthorizationID         string `json:"authorizationId"`
	Error                   string `json:"error"`
}

// AuthorizationView is one inventory row.
type AuthorizationView struct {
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	Provider         string   `json:"provider"`
	ProviderHost     string   `json:"providerHost"`
	AccountRef       string   `json:"accountRef"`
	Scopes           []string `json:"scopes"`
	Owner            string   `json:"owner"`
	BackupRevoker    string   `json:"backupRevoker"`
	Environment      string   `json:"environment"`
	CreatedHow       string   `json:"createdHow" enum:"GrantFlow"`
	ConnectedAt      string   `json:"connectedAt"`
	LastRefresh      string   `json:"lastRefresh"`
	LastUsed         string   `json:"lastUsed"`
	ReviewBy         string   `json:"reviewBy"`
	DisableProcedure string   `json:"disableProcedure"`
	Operations       []string `json:"operations"`
	State            string   `json:"state" enum:"AuthorizationState"`
	StateReason      string   `json:"stateReason"` // why it needs reconnection: invalid_grant, response_lost, vault_reset, ...
	Revocation       string   `json:"revocation" enum:"RevocationState"`
	Unattended       bool     `json:"unattended"`
	DPoP             bool     `json:"dpop"`
	ClientAuth       string   `json:"clientAuth"`
	Controlled       bool     `json:"controlled"`
	Problems         []string `json:"problems"`
	// APIHosts are where its operations may send its token.
	APIHosts []string `json:"apiHosts"`
	// RevocationEndpoint and IntrospectionEndpoint are where it is revoked
	// and verified ("" for none: SetEndpoints adds one); WaitingRevocations
	// counts its tokens still waiting to be revoked at the provider.
	RevocationEndpoint    string `json:"revocationEndpoint"`
	IntrospectionEndpoint string `json:"introspectionEndpoint"`
	WaitingRevocations    int    `json:"waitingRevocations"`
}

// InventoryForm is what a person edits on a connected row.
type InventoryForm struct {
	Owner            string `json:"owner"`
	BackupRevoker    string `json:"backupRevoker"`
	ReviewBy         string `json:"reviewBy"` // YYYY-MM-DD or ""
	DisableProcedure string `json:"disableProcedure"`
}

// RevokeStepView is one step of a revocation.
type RevokeStepView struct {
	Step   string `json:"step" enum:"RevokeStepName"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	At     string `json:"at"`
	// Unverified: the provider gave no way to check this step.
	Unverified bool `json:"unverified"`
}

// RevokeReport says what Revoke did, step by step.
type RevokeReport struct {
	AuthorizationID string           `json:"authorizationId"`
	Steps           []RevokeStepView `json:"steps"`
	RetryPending    bool             `json:"retryPending"`
}

// ParamView is one typed parameter of an operation.
type ParamView struct {
	Name     string   `json:"name"`
	Type     string   `json:"type" enum:"ParamType"`
	Allowed  []string `json:"allowed"`
	Pattern  string   `json:"pattern"`
	Required bool     `json:"required"`
}

// OperationView is a named operation, both ways.
type OperationView struct {
	Name            string      `json:"name"`
	AuthorizationID string      `json:"authorizationId"`
	Description     string      `json:"description"`
	Method          string      `json:"method" enum:"HttpMethod"`
	URLTemplate     string      `json:"urlTemplate"`
	Params          []ParamView `json:"params"`
	BodySchema      string      `json:"bodySchema"` // JSON Schema text or ""
	Approval        string      `json:"approval" enum:"ApprovalMode"`
	// ReadOnly: the person says it only reads; agents' clients are told so.
	ReadOnly bool `json:"readOnly"`
}

// SettingsView are the custody policy switches.
type SettingsView struct {
	BlockUncontrolled bool `json:"blockUncontrolled"`
}

func presetView(p providers.Preset) PresetView {
	return PresetView{
		ID: p.ID, Name: p.Name, DefaultScopes: nonNil(p.DefaultScopes), Tenant: p.Tenant, Notes: p.Notes,
		HasDevice: p.Metadata.DeviceAuthorizationEndpoint != "", HasRevocation: p.Metadata.RevocationEndpoint != "",
		APIHosts: nonNil(p.APIHosts),
	}
}

func discoveryView(m *providers.Metadata) DiscoveryView {
	return DiscoveryView{
		Issuer: m.Issuer, AuthorizationEndpoint: m.AuthorizationEndpoint, TokenEndpoint: m.TokenEndpoint,
		RevocationEndpoint: m.RevocationEndpoint, IntrospectionEndpoint: m.IntrospectionEndpoint,
		DeviceAuthorizationEndpoint: m.DeviceAuthorizationEndpoint, ScopesSupported: nonNil(m.ScopesSupported),
		DPoP: slices.Contains(m.DPoPSigningAlgValuesSupported, "ES256"), AuthMethods: nonNil(m.TokenEndpointAuthMethodsSupported),
	}
}

func flowView(f oauth.FlowView) FlowView {
	return FlowView{
		FlowID: f.ID, Flow: f.Flow, State: f.State, AuthorizationURL: f.AuthorizationURL, UserCode: f.UserCode,
		VerificationURI: f.VerificationURI, VerificationURIComplete: f.VerificationURIComplete,
		ExpiresAt: rfc3339(f.ExpiresAt), AuthorizationID: f.AuthorizationID, Error: flowError(f.Error),
	}
}

// flowError makes the manager's flow error (already free of secrets) a
// sentence without the package prefix.
func flowError(msg string) string {
	if msg == "" {
		return ""
	}
	return wordsOf(msg)
}

// authorizationView is an authorization in custody with the names of the
// operations bound to it (from the catalogue); who answers for it, its
// review date and whether it is under control are laid over it from the
// owner inventory (overlayInventory).
func authorizationView(a oauth.AuthorizationView, operations []string) AuthorizationView {
	return AuthorizationView{
		ID: a.ID, Name: a.Name, Provider: a.Provider, ProviderHost: a.ProviderHost, AccountRef: a.AccountRef,
		Scopes: nonNil(a.Scopes), Environment: a.Environment,
		CreatedHow: a.CreatedHow, ConnectedAt: rfc3339(a.ConnectedAt), LastRefresh: rfc3339(a.LastRefresh),
		LastUsed: rfc3339(a.LastUsed), DisableProcedure: a.DisableProcedure,
		Operations: nonNil(operations), State: a.State, StateReason: a.StateReason, Revocation: a.Revocation, Unattended: a.Unattended,
		DPoP: a.DPoP, ClientAuth: a.ClientAuth, Problems: nonNil(a.Problems), APIHosts: nonNil(a.APIHosts),
		RevocationEndpoint: a.RevocationEndpoint, IntrospectionEndpoint: a.IntrospectionEndpoint, WaitingRevocations: a.Waiting,
	}
}

func revokeReport(r oauth.RevokeReport) RevokeReport {
	out := RevokeReport{AuthorizationID: r.AuthorizationID, Steps: make([]RevokeStepView, 0, len(r.Steps)), RetryPending: r.RetryPending}
	for _, st := range r.Steps {
		out.Steps = append(out.Steps, RevokeStepView{Step: st.Step, OK: st.OK, Detail: st.Detail, At: rfc3339(st.At), Unverified: st.Unverified})
	}
	return out
}

func operationView(o operation.Operation) OperationView {
	v := OperationView{
		Name: o.Name, AuthorizationID: o.AuthorizationID, Description: o.Description, Method: o.Method,
		URLTemplate: o.URLTemplate, Params: make([]ParamView, 0, len(o.Params)), BodySchema: string(o.BodySchema),
		Approval: o.Approval, ReadOnly: o.ReadOnly,
	}
	for _, p := range o.Params {
		v.Params = append(v.Params, ParamView{Name: p.Name, Type: p.Type, Allowed: nonNil(p.Allowed), Pattern: p.Pattern, Required: p.Required})
	}
	return v
}

// operation converts the UI's operation; the catalogue validates the rest.
func (v OperationView) operation() (operation.Operation, error) {
	o := operation.Operation{
		Name: strings.TrimSpace(v.Name), AuthorizationID: v.AuthorizationID, Description: v.Description,
		Method: v.Method, URLTemplate: strings.TrimSpace(v.URLTemplate), Approval: v.Approval, ReadOnly: v.ReadOnly,
	}
	for _, p := range v.Params {
		var allowed []string
		if len(p.Allowed) > 0 {
			allowed = p.Allowed
		}
		o.Params = append(o.Params, operation.Param{Name: p.Name, Type: p.Type, Allowed: allowed, Pattern: p.Pattern, Required: p.Required})
	}
	if schema := strings.TrimSpace(v.BodySchema); schema != "" {
		if !json.Valid([]byte(schema)) {
			return o, shown("The body schema is not valid JSON.")
		}
		o.BodySchema = json.RawMessage(schema)
	}
	return o, nil
}

// parseDay reads a YYYY-MM-DD date ("" is none) as midnight UTC.
func parseDay(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, shown(fmt.Sprintf("The %s must be a date written YYYY-MM-DD.", field))
	}
	return t, nil
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
