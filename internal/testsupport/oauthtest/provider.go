package oauthtest

import (
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Subject is the sub of every token issued through the device grant: the
// provider has one user, the one who calls ApproveDevice.
const Subject = "oauthtest-user"

// DefaultClientID is the client_id when Options.ClientID is empty.
const DefaultClientID = "yett-test"

// Grant types as they appear in grant_type and in TokenRequests.
const (
	GrantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
)

var (
	supportedScopes = []string{"read", "write"}
	defaultScope    = "read"
)

// Options configure a Provider. The zero value is a public client with
// bearer tokens and RFC default timings.
type Options struct {
	ClientID       string        // "" => DefaultClientID
	ClientSecret   string        // "" => public client (auth method none); else client_secret_basic required
	AccessTTL      time.Duration // 0 => 1h
	RequireDPoP    bool          // /token refuses requests without a DPoP proof
	DPoPNonce      bool          // /token and /resource require a server nonce in proofs (RFC 9449 §8, §9)
	DeviceInterval time.Duration // minimum time between device polls; 0 => 1s
	SlowDownStep   time.Duration // growth of the interval after slow_down; 0 => 5s (RFC 8628 §3.5)
	DeviceCodeTTL  time.Duration // lifetime of a device code; 0 => 10m
}

func (o Options) withDefaults() Options {
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.AccessTTL <= 0 {
		o.AccessTTL = time.Hour
	}
	if o.DeviceInterval <= 0 {
		o.DeviceInterval = time.Second
	}
	if o.SlowDownStep <= 0 {
		o.SlowDownStep = 5 * time.Second
	}
	if o.DeviceCodeTTL <= 0 {
		o.DeviceCodeTTL = 10 * time.Minute
	}
	return o
}

// Provider is a running test authorization server and protected resource.
type Provider struct {
	// URL is http://127.0.0.1:PORT, the issuer and the base of every endpoint.
	URL string

	opts Options

	mu             sync.Mutex
	devices        map[string]*deviceGrant // by device_code
	userCodes      map[string]*deviceGrant // by normalized user code
	access         map[string]*accessToken
	refresh        map[string]*refreshToken
	seenJTI        map[string]time.Time // jti -> when it may be forgotten
	tokenNonces    nonceSet
	resourceNonces nonceSet
	requests       map[string]int // /token requests by grant_type
}

// Errors of ApproveDevice and DenyDevice.
var (
	ErrUnknownUserCode   = errors.New("oauthtest: unknown user code")
	ErrDeviceCodeExpired = errors.New("oauthtest: device code expired")
	ErrDeviceDecided     = errors.New("oauthtest: device code already approved or denied")
)

// New starts a Provider for the duration of t.
func New(t testing.TB, opts Options) *Provider {
	t.Helper()
	p := &Provider{
		opts:           opts.withDefaults(),
		devices:        make(map[string]*deviceGrant),
		userCodes:      make(map[string]*deviceGrant),
		access:         make(map[string]*accessToken),
		refresh:        make(map[string]*refreshToken),
		seenJTI:        make(map[string]time.Time),
		tokenNonces:    make(nonceSet),
		resourceNonces: make(nonceSet),
		requests:       make(map[string]int),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", p.handleMetadata)
	mux.HandleFunc("/device_authorization", p.handleDeviceAuthorization)
	mux.HandleFunc("GET /device", p.handleVerificationPage)
	mux.HandleFunc("/token", p.handleToken)
	mux.HandleFunc("/revoke", p.handleRevoke)
	mux.HandleFunc("/introspect", p.handleIntrospect)
	mux.HandleFunc("/resource", p.handleResource)
	srv := httptest.NewUnstartedServer(mux)
	// The URL is known from the listener before Start, so no handler can
	// observe it being written.
	p.URL = "http://" + srv.Listener.Addr().String()
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// Metadata returns the RFC 8414 document served at
// /.well-known/oauth-authorization-server.
func (p *Provider) Metadata() map[string]any {
	authMethod := "none"
	if p.opts.ClientSecret != "" {
		authMethod = "client_secret_basic"
	}
	return map[string]any{
		"issuer":                        p.URL,
		"token_endpoint":                p.URL + "/token",
		"device_authorization_endpoint": p.URL + "/device_authorization",
		"revocation_endpoint":           p.URL + "/revoke",
		"introspection_endpoint":        p.URL + "/introspect",
		"grant_types_supported":         []string{GrantDeviceCode, GrantRefreshToken, GrantClientCredentials},
		// No authorization endpoint, so no response types (RFC 8414 §2
		// still requires the member).
		"response_types_supported":                      []string{},
		"token_endpoint_auth_methods_supported":         []string{authMethod},
		"revocation_endpoint_auth_methods_supported":    []string{authMethod},
		"introspection_endpoint_auth_methods_supported": []string{authMethod},
		"dpop_signing_alg_values_supported":             []string{dpopAlg},
		"scopes_supported":                              slices.Clone(supportedScopes),
	}
}

func (p *Provider) handleMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, p.Metadata())
}

// TokenRequests counts the requests /token received, by grant_type, whether
// they succeeded or not.
func (p *Provider) TokenRequests() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.requests))
	for k, v := range p.requests {
		out[k] = v
	}
	return out
}

// Active reports what /introspect would say of token's "active" member.
func (p *Provider) Active(token string) bool {
	return p.introspect(token)["active"] == true
}

// randomToken returns 128 bits of randomness, the same strength for device
// codes, tokens and nonces.
func randomToken() string { return rand.Text() }
