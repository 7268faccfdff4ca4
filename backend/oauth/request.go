package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/oauth2"

	"github.com/yettdev/yett/backend/ids"
	"github.com/yettdev/yett/backend/oauth/providers"
	"github.com/yettdev/yett/backend/store"
)

// Flows a person can start. The resource owner password grant is not one.
const (
	FlowAuthorizationCode = "authorization_code"
	FlowClientCredentials = "client_credentials"
	FlowDeviceCode        = "device_code"
)

// Environments: one authorization belongs to exactly one.
var Environments = []string{"development", "staging", "production"}

// Endpoints are a provider's endpoints for a custom connection (presets
// bring their own).
type Endpoints struct {
	Issuer                      string
	AuthorizationEndpoint       string
	TokenEndpoint               string
	RevocationEndpoint          string
	IntrospectionEndpoint       string
	DeviceAuthorizationEndpoint string
}

// ConnectRequest is what a person fills in to connect an account. Only the
// app builds one; nothing on the agent side can.
type ConnectRequest struct {
	Name       string
	Provider   string // a preset id, or "custom"
	Tenant     string // presets with a tenant (Microsoft)
	Endpoints  Endpoints
	ClientID   string
	ClientAuth string // none, client_secret, private_key_jwt
	// ClientSecret is write-only: sealed at once, never returned.
	ClientSecret     []byte
	ClientKeyID      string // private_key_jwt: a key from NewClientKey
	Scopes           []string
	Environment      string
	Unattended       bool // ask for offline access and keep a refresh token
	Flow             string
	Owner            string
	BackupRevoker    string
	ReviewBy         time.Time
	DisableProcedure string
	DPoP             bool
	// APIHosts are the hosts the account's API is on, where a named
	// operation may send its token (target.HostPattern); none means the
	// preset's, or the provider's own hosts (APIHosts).
	APIHosts []string
	// Resource is the resource indicator (RFC 8707) its tokens are asked
	// for, in the authorization request and every token request: an
	// absolute URL without a fragment (an upstream MCP server's URL, as
	// the MCP authorization spec requires). "" sends none.
	Resource string
	// CallbackPort is the loopback port the authorization code flow
	// listens on for the browser's return; 0 picks a free one (RFC 8252
	// §7.3). A person whose browser is on another machine forwards this
	// port over SSH, so they need to know it before the flow starts.
	CallbackPort int
}

// newRow validates req and builds the row it would create (not stored).
func (m *connector) newRow(ctx context.Context, req ConnectRequest) (*row, error) {
	if err := m.checkRequest(req); err != nil {
		return nil, err
	}
	md, requireIss, authParams, offline, provider, err := m.resolveProvider(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := checkFlowEndpoints(req, md); err != nil {
		return nil, err
	}
	scopes, err := requestScopes(req, offline)
	if err != nil {
		return nil, err
	}
	apiHosts, err := parseAPIHosts(req.APIHosts)
	if err != nil {
		return nil, err
	}
	resource, err := checkResource(req.Resource)
	if err != nil {
		return nil, err
	}
	id := ids.New("az-")
	r := &row{
		APIHosts: apiHosts, Resource: resource,
		ID: id, Name: req.Name, Provider: provider, Issuer: md.Issuer,
		AuthorizationEndpoint: md.AuthorizationEndpoint, TokenEndpoint: md.TokenEndpoint,
		RevocationEndpoint: md.RevocationEndpoint, IntrospectionEndpoint: md.IntrospectionEndpoint,
		DeviceEndpoint: md.DeviceAuthorizationEndpoint, ClientID: req.ClientID, ClientAuth: req.ClientAuth,
		DPoP: req.DPoP, RequireIss: requireIss, RequestedScopes: strings.Join(scopes, " "),
		Environment: req.Environment, Unattended: req.Unattended, CreatedHow: req.Flow,
		Owner: strings.TrimSpace(req.Owner), BackupRevoker: strings.TrimSpace(req.BackupRevoker),
		ReviewBy: store.UnixSeconds(req.ReviewBy), DisableProcedure: req.DisableProcedure,
		State: StateActive, Revocation: RevocationNone, Generation: 1,
	}
	if len(authParams) > 0 && req.Unattended {
		b, _ := json.Marshal(authParams)
		r.AuthParams = string(b)
	}
	if err := m.setClientAuth(r, req, md); err != nil {
		return nil, err
	}
	if req.DPoP {
		if err := m.newKey(dpopKeyID(id), keyPurposeDPoP); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// checkResource checks a resource indicator: RFC 8707 §2 wants an
// absolute URI without a fragment; Yett takes https, or http on loopback,
// as for every other endpoint.
func checkResource(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if len(s) > 2048 {
		return "", invalidf("the resource is longer than 2048 bytes")
	}
	if err := providers.CheckURL("resource", s); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return s, nil
}

// invalidf is ErrInvalid with the rule a request broke.
func invalidf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
}

// checkRequest checks what a request says before anything reaches the
// provider: its texts, a free name, the environment and the flow.
func (m *connector) checkRequest(req ConnectRequest) error {
	if err := checkText("name", req.Name, 1, 80); err != nil {
		return err
	}
	if err := m.nameFree(req.Name); err != nil {
		return err
	}
	if !slices.Contains(Environments, req.Environment) {
		return invalidf("environment must be development, staging or production")
	}
	if !slices.Contains([]string{FlowAuthorizationCode, FlowClientCredentials, FlowDeviceCode}, req.Flow) {
		return invalidf("flow must be authorization_code, client_credentials or device_code (the password grant is not offered)")
	}
	if err := checkText("client id", req.ClientID, 1, 256); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"owner", req.Owner}, {"backup revoker", req.BackupRevoker}, {"disable procedure", req.DisableProcedure}} {
		if err := checkText(f.name, f.v, 0, 512); err != nil {
			return err
		}
	}
	return nil
}

// checkFlowEndpoints checks that the provider has the endpoints the flow
// needs, and a client credentials grant has client authentication.
func checkFlowEndpoints(req ConnectRequest, md providers.Metadata) error {
	if md.TokenEndpoint == "" {
		return invalidf("the provider has no token endpoint")
	}
	switch req.Flow {
	case FlowAuthorizationCode:
		if md.AuthorizationEndpoint == "" {
			return invalidf("the provider has no authorization endpoint")
		}
	case FlowDeviceCode:
		if md.DeviceAuthorizationEndpoint == "" {
			return invalidf("the provider has no device authorization endpoint")
		}
	case FlowClientCredentials:
		if req.ClientAuth == ClientAuthNone {
			return invalidf("client credentials need client authentication (a secret or a private key)")
		}
	}
	return nil
}

// requestScopes is the request's scopes, checked and without repeats, and
// the provider's offline scope for an unattended grant.
func requestScopes(req ConnectRequest, offline string) ([]string, error) {
	scopes := []string{}
	for _, s := range req.Scopes {
		if !validScope(s) {
			return nil, invalidf("a scope may contain only printable ASCII without spaces, quotes or backslashes")
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if req.Unattended && req.Flow != FlowClientCredentials && offline != "" && !slices.Contains(scopes, offline) {
		scopes = append(scopes, offline)
	}
	return scopes, nil
}

// setClientAuth sets how r authenticates at the token endpoint, and seals
// a client secret under the vault.
func (m *connector) setClientAuth(r *row, req ConnectRequest, md providers.Metadata) error {
	switch req.ClientAuth {
	case ClientAuthNone:
		r.AuthStyle = int(oauth2.AuthStyleInParams)
		if len(req.ClientSecret) > 0 {
			return invalidf("a public client (no client authentication) has no secret")
		}
	case ClientAuthSecret:
		if len(req.ClientSecret) == 0 || len(req.ClientSecret) > 4096 {
			return invalidf("client secret missing or too long")
		}
		r.AuthStyle = int(oauth2.AuthStyleInHeader)
		if len(md.TokenEndpointAuthMethodsSupported) > 0 && !slices.Contains(md.TokenEndpointAuthMethodsSupported, "client_secret_basic") &&
			slices.Contains(md.TokenEndpointAuthMethodsSupported, "client_secret_post") {
			r.AuthStyle = int(oauth2.AuthStyleInParams)
		}
		sealed, err := m.vault.SealBlob(purposeClient, tokenAD(r.ID, "client_secret", 0), req.ClientSecret)
		if err != nil {
			return err
		}
		r.SealedClientSecret = sealed
	case ClientAuthPrivateKeyJWT:
		if _, err := m.loadKey(req.ClientKeyID); err != nil {
			return invalidf("private_key_jwt needs a client key generated in Yett")
		}
		r.ClientKeyID = req.ClientKeyID
		r.AuthStyle = int(oauth2.AuthStyleInParams)
	default:
		return invalidf("client authentication must be none, client_secret or private_key_jwt")
	}
	return nil
}

func checkText(field, v string, minLen, maxLen int) error {
	if len(strings.TrimSpace(v)) < minLen || len(v) > maxLen || !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\r\n") {
		return fmt.Errorf("%w: %s must be %d to %d characters on one line", ErrInvalid, field, minLen, maxLen)
	}
	return nil
}

// validScope follows RFC 6749 §3.3's scope-token.
func validScope(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e {
			return false
		}
	}
	return true
}

// resolveProvider turns a request's provider into checked metadata: a
// preset's fixed endpoints, a custom issuer's discovered ones, or custom
// endpoints typed in. Every endpoint must be https (loopback http is
// allowed for local providers and tests).
func (m *connector) resolveProvider(ctx context.Context, req ConnectRequest) (md providers.Metadata, requireIss bool, params map[string]string, offline, provider string, err error) {
	if req.Provider != "" && req.Provider != "custom" {
		p, ok := providers.Lookup(req.Provider)
		if !ok {
			return md, false, nil, "", "", fmt.Errorf("%w: unknown provider preset", ErrInvalid)
		}
		if p.Tenant {
			if p, err = providers.ResolveTenant(p, req.Tenant); err != nil {
				return md, false, nil, "", "", fmt.Errorf("%w: %v", ErrInvalid, err)
			}
		}
		md = p.Metadata
		requireIss = md.AuthorizationResponseIssParameterSupported
		return md, requireIss, p.AuthParams, p.OfflineScope, p.ID, md.Validate(true)
	}
	e := req.Endpoints
	if e.TokenEndpoint == "" && e.Issuer != "" {
		d, err := providers.Discover(ctx, m.http, e.Issuer)
		if err != nil {
			return md, false, nil, "", "", fmt.Errorf("%w: discovery failed: %v", ErrInvalid, err)
		}
		md = *d
		// The introspection endpoint may be elsewhere (an admin port).
		if e.IntrospectionEndpoint != "" {
			md.IntrospectionEndpoint = e.IntrospectionEndpoint
		}
	} else {
		md = providers.Metadata{
			Issuer: e.Issuer, AuthorizationEndpoint: e.AuthorizationEndpoint, TokenEndpoint: e.TokenEndpoint,
			RevocationEndpoint: e.RevocationEndpoint, IntrospectionEndpoint: e.IntrospectionEndpoint,
			DeviceAuthorizationEndpoint: e.DeviceAuthorizationEndpoint,
		}
	}
	if err := md.Validate(true); err != nil {
		return md, false, nil, "", "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	// OpenID Connect's offline_access asks for a refresh token. It is added
	// only when the provider's metadata lists it: another provider would
	// refuse it (invalid_scope) and issues refresh tokens on its own terms,
	// and for typed-in endpoints the person writes the scopes the provider
	// needs.
	if slices.Contains(md.ScopesSupported, "offline_access") {
		offline = "offline_access"
	}
	return md, md.AuthorizationResponseIssParameterSupported, nil, offline, "custom", nil
}
