package providers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Preset is a provider Yett knows by name, with its endpoints fixed here.
//
// Metadata lists the subset of each provider's capabilities Yett relies on
// (for example only S256 among PKCE methods), not everything the provider
// advertises.
type Preset struct {
	// ID is the stable name used in configuration: "github", "google",
	// "gitlab", "microsoft", "slack", "atlassian".
	ID string
	// Name is the provider's name as shown to a person.
	Name string
	// Metadata holds the fixed endpoints. Issuer is set only where the
	// provider is an OpenID Connect issuer for the tokens Yett receives.
	Metadata Metadata
	// APIHosts are the hosts of the provider's APIs that its access tokens
	// are for: a named operation of an authorization sends its token only
	// to one of them (target.HostPattern).
	APIHosts []string
	// DefaultScopes are the scopes a new connection proposes before the
	// person edits them. Empty when the provider has no sensible default.
	DefaultScopes []string
	// OfflineScope is the scope that makes the provider issue a refresh
	// token ("offline_access"), or "" when it issues one without a scope
	// (always, by app setting, or through AuthParams).
	OfflineScope string
	// AuthParams are extra parameters for the authorization request. The
	// caller adds every one of them, with OfflineScope, to the
	// authorization request of a connection that must keep working while
	// the person is away, which is every connection Yett holds a refresh
	// token for. A one-off, attended authorization may leave out OfflineScope
	// and the params that only ask for a refresh token (Google's access_type
	// and prompt), but never Atlassian's audience, without which the token
	// is useless.
	AuthParams map[string]string
	// Tenant is true when the endpoints contain "{tenant}" (Microsoft); use
	// ResolveTenant before anything else.
	Tenant bool
	// Notes say how the provider issues, rotates and revokes refresh
	// tokens, and where it departs from the RFCs.
	Notes string
	// Discovery is the issuer to pass to Discover instead of using the fixed
	// endpoints, when the provider publishes metadata Yett can check.
	Discovery string
}

// ErrInvalidTenant means a Microsoft tenant is not a GUID, a DNS domain, or
// one of "common", "organizations", "consumers".
var ErrInvalidTenant = errors.New("invalid tenant")

// ErrNoTenant means ResolveTenant was given a preset without a tenant.
var ErrNoTenant = errors.New("preset has no tenant")

const tenantPlaceholder = "{tenant}"

// Presets returns every preset, in a stable order. The values are fresh
// copies: changing them changes nothing for other callers.
func Presets() []Preset {
	return presetTable()
}

// Lookup returns the preset with the given ID. (The function is not named
// Preset because the type is.)
func Lookup(id string) (Preset, bool) {
	for _, p := range presetTable() {
		if p.ID == id {
			return p, true
		}
	}
	return Preset{}, false
}

// ResolveTenant returns a copy of p with "{tenant}" replaced in every URL.
// tenant is a directory GUID, a verified domain (contoso.onmicrosoft.com),
// or one of the aliases "common", "organizations", "consumers"; GUIDs and
// domains are lowercased.
//
// Only a GUID tenant keeps Issuer and Discovery. Microsoft's documents for
// a domain or an alias name the tenant's GUID issuer (or, for "common" and
// "organizations", the literal "{tenantid}"), so they can never pass the
// exact issuer check of Discover; for those the fixed endpoints are used and
// each ID token's issuer has to be checked against its tid claim.
//
// Errors wrap ErrNoTenant or ErrInvalidTenant; the tenant is not echoed.
func ResolveTenant(p Preset, tenant string) (Preset, error) {
	if !p.Tenant {
		return Preset{}, fmt.Errorf("%w: %s", ErrNoTenant, p.ID)
	}
	kind, t := classifyTenant(tenant)
	if kind == tenantInvalid {
		return Preset{}, ErrInvalidTenant
	}
	out := clonePreset(p)
	m := &out.Metadata
	for _, f := range []*string{
		&m.Issuer, &m.AuthorizationEndpoint, &m.TokenEndpoint, &m.RevocationEndpoint,
		&m.IntrospectionEndpoint, &m.DeviceAuthorizationEndpoint, &m.JWKSURI,
		&m.UserinfoEndpoint, &out.Discovery,
	} {
		*f = strings.ReplaceAll(*f, tenantPlaceholder, t)
	}
	if kind != tenantGUID {
		m.Issuer = ""
		out.Discovery = ""
	}
	out.Tenant = false
	return out, nil
}

type tenantKind int

const (
	tenantInvalid tenantKind = iota
	tenantGUID
	tenantDomain
	tenantAlias
)

// classifyTenant says what tenant is and returns it in the form used in
// URLs.
func classifyTenant(tenant string) (tenantKind, string) {
	switch tenant {
	case "common", "organizations", "consumers":
		return tenantAlias, tenant
	}
	t := strings.ToLower(tenant)
	if isGUID(t) {
		return tenantGUID, t
	}
	if isDomain(t) {
		return tenantDomain, t
	}
	return tenantInvalid, ""
}

// isGUID accepts the 8-4-4-4-12 hex form, lowercase.
func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// isDomain accepts a lowercase DNS name of at least two labels, each of
// letters, digits and inner hyphens.
func isDomain(s string) bool {
	if len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	// A top-level label of digits only would make this an IP address.
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

func clonePreset(p Preset) Preset {
	p.DefaultScopes = slices.Clone(p.DefaultScopes)
	p.AuthParams = maps.Clone(p.AuthParams)
	m := &p.Metadata
	for _, s := range []*[]string{
		&m.ScopesSupported, &m.ResponseTypesSupported, &m.GrantTypesSupported,
		&m.CodeChallengeMethodsSupported, &m.TokenEndpointAuthMethodsSupported,
		&m.TokenEndpointAuthSigningAlgValuesSupported, &m.DPoPSigningAlgValuesSupported,
	} {
		*s = slices.Clone(*s)
	}
	return p
}
