package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/yettdev/yett/backend/target"
)

// Errors callers can branch on with errors.Is. Each is wrapped with the name
// of the field or the step that failed.
var (
	// ErrInvalidMetadata means a metadata document or a Metadata value is
	// malformed: not a JSON object, a field of the wrong type, a required
	// field missing, or a URL that cannot be used as an endpoint.
	ErrInvalidMetadata = errors.New("invalid authorization server metadata")
	// ErrIssuerMismatch means the document names an issuer other than the
	// one it was fetched for (RFC 8414 §3.3). Such metadata must not be used.
	ErrIssuerMismatch = errors.New("metadata issuer does not match the requested issuer")
	// ErrInsecureEndpoint means a URL is neither https nor http to a
	// loopback host.
	ErrInsecureEndpoint = errors.New("endpoint is not https and its host is not loopback")
)

// Metadata holds the fields of RFC 8414 authorization server metadata (and
// of OpenID Connect Discovery, which shares them) that Yett uses. JSON names
// are the registered ones. Fields a document does not have stay empty: an
// empty RevocationEndpoint means the server has no RFC 7009 endpoint.
type Metadata struct {
	Issuer                      string `json:"issuer"`
	AuthorizationEndpoint       string `json:"authorization_endpoint,omitempty"`
	TokenEndpoint               string `json:"token_endpoint,omitempty"`
	RevocationEndpoint          string `json:"revocation_endpoint,omitempty"`
	IntrospectionEndpoint       string `json:"introspection_endpoint,omitempty"`
	DeviceAuthorizationEndpoint string `json:"device_authorization_endpoint,omitempty"`
	JWKSURI                     string `json:"jwks_uri,omitempty"`
	UserinfoEndpoint            string `json:"userinfo_endpoint,omitempty"`

	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported                     []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	DPoPSigningAlgValuesSupported              []string `json:"dpop_signing_alg_values_supported,omitempty"`

	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
}

// ParseMetadata decodes a metadata document fetched for issuer and checks
// it: the document's issuer must equal issuer exactly, and the result must
// pass Validate(true).
//
// Errors wrap ErrInvalidMetadata, ErrIssuerMismatch or ErrInsecureEndpoint.
// They name the offending field and never quote the body.
func ParseMetadata(issuer string, body []byte) (*Metadata, error) {
	var m Metadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, decodeError(err)
	}
	if m.Issuer == "" {
		return nil, fmt.Errorf("%w: issuer is missing", ErrInvalidMetadata)
	}
	if m.Issuer != issuer {
		return nil, fmt.Errorf("%w: document names %s", ErrIssuerMismatch, quoteShort(m.Issuer))
	}
	if err := m.Validate(true); err != nil {
		return nil, err
	}
	return &m, nil
}

// decodeError turns a JSON error into one that names the field or the
// offset, never the text around it.
func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			return fmt.Errorf("%w: document is not a JSON object", ErrInvalidMetadata)
		}
		return fmt.Errorf("%w: %s has the wrong JSON type (want %s)", ErrInvalidMetadata, field, typeErr.Type)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Errorf("%w: malformed JSON at byte %d", ErrInvalidMetadata, syntaxErr.Offset)
	}
	return fmt.Errorf("%w: malformed JSON", ErrInvalidMetadata)
}

// Validate checks that m can be used: an issuer (when set) and every
// endpoint are absolute URLs without a fragment, the issuer has no query
// (RFC 8414 §2), and a token endpoint is present. With
// requireLoopbackOrHTTPS every URL must also be https, or http to a loopback
// host, which is what Yett requires of anything that will carry a
// credential; without it http is accepted for any host, for a caller that
// applies its own rule.
//
// Errors wrap ErrInvalidMetadata or ErrInsecureEndpoint and name the field.
func (m *Metadata) Validate(requireLoopbackOrHTTPS bool) error {
	if m == nil {
		return fmt.Errorf("%w: no metadata", ErrInvalidMetadata)
	}
	if m.Issuer != "" {
		if err := checkURL("issuer", m.Issuer, requireLoopbackOrHTTPS); err != nil {
			return err
		}
		if strings.Contains(m.Issuer, "?") {
			return fmt.Errorf("%w: issuer has a query", ErrInvalidMetadata)
		}
	}
	if m.TokenEndpoint == "" {
		return fmt.Errorf("%w: token_endpoint is missing", ErrInvalidMetadata)
	}
	for _, f := range m.endpoints() {
		if f.value == "" {
			continue
		}
		if err := checkURL(f.name, f.value, requireLoopbackOrHTTPS); err != nil {
			return err
		}
	}
	return nil
}

type namedURL struct{ name, value string }

func (m *Metadata) endpoints() []namedURL {
	return []namedURL{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"revocation_endpoint", m.RevocationEndpoint},
		{"introspection_endpoint", m.IntrospectionEndpoint},
		{"device_authorization_endpoint", m.DeviceAuthorizationEndpoint},
		{"jwks_uri", m.JWKSURI},
		{"userinfo_endpoint", m.UserinfoEndpoint},
	}
}

// CheckURL checks a URL that will carry or name a credential by the rule
// of metadata's endpoints: absolute http(s), no user information or
// fragment, https unless its host is loopback.
func CheckURL(field, raw string) error { return checkURL(field, raw, true) }

// checkURL is the rule every URL in metadata follows. The value itself is
// not echoed: it came from the network and may be long or misleading.
func checkURL(field, raw string, requireLoopbackOrHTTPS bool) error {
	if strings.Contains(raw, "{") || strings.Contains(raw, "}") {
		return fmt.Errorf("%w: %s has an unresolved placeholder", ErrInvalidMetadata, field)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %s is not a URL", ErrInvalidMetadata, field)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%w: %s is not an http(s) URL", ErrInvalidMetadata, field)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%w: %s has no host", ErrInvalidMetadata, field)
	}
	if u.User != nil {
		return fmt.Errorf("%w: %s carries user information", ErrInvalidMetadata, field)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("%w: %s has a fragment", ErrInvalidMetadata, field)
	}
	if requireLoopbackOrHTTPS && u.Scheme != "https" && !target.PlainHTTPAllowed(u.Hostname()) {
		return fmt.Errorf("%s: %w", field, ErrInsecureEndpoint)
	}
	return nil
}

// quoteShort quotes untrusted text for an error message, cut to a length
// that cannot flood a log or a dialog.
func quoteShort(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
