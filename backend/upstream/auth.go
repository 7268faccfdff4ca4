package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/yettdev/yett/backend/oauth/providers"
	"github.com/yettdev/yett/backend/version"
)

// A remote MCP server behind OAuth says how it is authorized the way the
// MCP authorization spec (2025-11-25) says: it answers a request without
// a token with 401 and a WWW-Authenticate challenge that may name its
// protected resource metadata (RFC 9728); that document names the
// resource its tokens are for and its authorization servers, whose own
// metadata (RFC 8414 or OpenID Connect discovery) names the endpoints.
// The Go SDK's auth and oauthex packages implement the discovery steps
// and check what they fetch; Yett calls them with its guarded client and then
// connects the account under its own OAuth custody (PKCE, the person's
// consent in a browser, the refresh token sealed in the vault, the
// resource indicator on every request), where every other account is.

// Errors of DiscoverAuth.
var (
	// ErrNoAuthAsked: the server answered a request without a token with
	// something other than 401: it does not ask for OAuth.
	ErrNoAuthAsked = errors.New("upstream: the server did not ask for authorization")
	// ErrNoResourceMetadata: the server asked for authorization and
	// published no usable protected resource metadata.
	ErrNoResourceMetadata = errors.New("upstream: the server publishes no protected resource metadata (RFC 9728)")
	// ErrAuthServerMetadata: the authorization server the metadata names
	// publishes no usable metadata of its own (RFC 8414).
	ErrAuthServerMetadata = errors.New("upstream: the authorization server's metadata could not be used")
	// ErrRegistration: dynamic client registration failed; its text says
	// the status and OAuth error code only.
	ErrRegistration = errors.New("upstream: dynamic client registration failed")
)

// AuthDiscovery is what a remote server and its authorization server say
// about how it is authorized. Nothing in it is secret.
type AuthDiscovery struct {
	// Resource is the resource its tokens are for: the resource
	// indicator (RFC 8707) of every authorization and token request.
	Resource string
	// Issuer is its authorization server; RegistrationEndpoint that
	// server's dynamic client registration endpoint (RFC 7591), "" when
	// it has none.
	Issuer               string
	RegistrationEndpoint string
	// Scopes are the scopes to ask for: the challenge's, else those the
	// resource metadata lists. OfflineAccess says the authorization
	// server lists offline_access (it issues refresh tokens for it).
	Scopes        []string
	OfflineAccess bool
	// ResourceName is the server's own name for itself, untrusted, for
	// the person to read.
	ResourceName string
}

// DiscoverAuth asks the remote server at serverURL how it is authorized.
// client carries every request (the server's, its metadata's and the
// authorization server's); it should be Yett's guarded client, since the
// addresses after the first come from the server.
func DiscoverAuth(ctx context.Context, client *http.Client, serverURL string) (*AuthDiscovery, error) {
	challenges, err := challenge(ctx, client, serverURL)
	if err != nil {
		return nil, err
	}
	var prm *oauthex.ProtectedResourceMetadata
	var errs []error
	for _, c := range metadataURLs(challenges, serverURL) {
		p, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, client)
		if err == nil && p != nil && len(p.AuthorizationServers) > 0 {
			prm = p
			break
		}
		if err == nil {
			err = errors.New("it names no authorization server")
		}
		errs = append(errs, fmt.Errorf("%s: %w", c.url, err))
	}
	if prm == nil {
		return nil, fmt.Errorf("%w: %w", ErrNoResourceMetadata, errors.Join(errs...))
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], client)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAuthServerMetadata, err)
	}
	if asm == nil {
		return nil, fmt.Errorf("%w: %s publishes none (RFC 8414)", ErrAuthServerMetadata, prm.AuthorizationServers[0])
	}
	d := &AuthDiscovery{
		Resource: prm.Resource, Issuer: asm.Issuer, RegistrationEndpoint: asm.RegistrationEndpoint,
		OfflineAccess: slices.Contains(asm.ScopesSupported, "offline_access"), ResourceName: prm.ResourceName,
	}
	d.Scopes = challengeScopes(challenges)
	if len(d.Scopes) == 0 {
		d.Scopes = slices.Clone(prm.ScopesSupported)
	}
	return d, nil
}

// challenge sends the server an initialize request without a token and
// reads its 401 challenges.
func challenge(ctx context.Context, client *http.Client, serverURL string) ([]oauthex.Challenge, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"yett","version":%q}}}`, version.Number())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("upstream: the server could not be reached: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, fmt.Errorf("%w (it answered HTTP %d without a token)", ErrNoAuthAsked, resp.StatusCode)
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("upstream: its WWW-Authenticate header does not parse: %w", err)
	}
	return cs, nil
}

type metadataURL struct{ url, resource string }

// metadataURLs are where the protected resource metadata may be, in the
// spec's order: the challenge's resource_metadata, then the well-known
// URI at the endpoint's path, then at the root (RFC 9728 §3.1), each with
// the resource the document must name.
func metadataURLs(cs []oauthex.Challenge, serverURL string) []metadataURL {
	var out []metadataURL
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; c.Scheme == "bearer" && u != "" {
			out = append(out, metadataURL{u, serverURL})
			break
		}
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return out
	}
	at := *u
	at.RawQuery, at.Path, at.RawPath = "", "/.well-known/oauth-protected-resource/"+strings.TrimLeft(u.Path, "/"), ""
	out = append(out, metadataURL{at.String(), serverURL})
	root := *u
	root.RawQuery, root.Path, root.RawPath = "", "/.well-known/oauth-protected-resource", ""
	origin := *u
	origin.RawQuery, origin.Path, origin.RawPath = "", "", ""
	return append(out, metadataURL{root.String(), origin.String()})
}

func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// Registration is a client registered dynamically (RFC 7591) for Yett.
// ClientSecret is set only when the authorization server insisted on one;
// the caller seals it and wipes its copy.
type Registration struct {
	ClientID     string
	ClientSecret []byte
}

// Register registers Yett as a native client of d's authorization server
// (RFC 7591, RFC 8252: a public client with PKCE and a loopback redirect)
// for the authorization code grant with refresh tokens.
//
// The SDK's oauthex.RegisterClient is not used: it decodes the response's
// jwks as a string where RFC 7591 makes it an object (Ory Hydra sends
// "jwks":{} and the registration fails), and its error quotes the whole
// response, which carries the registration access token. This reads the
// two fields Yett keeps and quotes nothing the server sent.
func Register(ctx context.Context, client *http.Client, d *AuthDiscovery, redirectURI string) (Registration, error) {
	if d.RegistrationEndpoint == "" {
		return Registration{}, fmt.Errorf("%w: the authorization server offers none; register a client with it and give its client id", ErrRegistration)
	}
	if err := checkEndpoint(d.RegistrationEndpoint); err != nil {
		return Registration{}, err
	}
	scopes := slices.Clone(d.Scopes)
	if d.OfflineAccess && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	body, err := json.Marshal(map[string]any{
		"redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"client_name": "Yett", "application_type": "native", "scope": strings.Join(scopes, " "),
		"software_id": "yett", "software_version": version.Number(),
	})
	if err != nil {
		return Registration{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return Registration{}, fmt.Errorf("upstream: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return Registration{}, fmt.Errorf("%w: the authorization server could not be reached: %w", ErrRegistration, err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Error        string `json:"error"`
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, 1<<20))
	decErr := dec.Decode(&out)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		code := ""
		if decErr == nil && oauthErrorCode.MatchString(out.Error) {
			code = " (" + out.Error + ")"
		}
		return Registration{}, fmt.Errorf("%w: it was refused with HTTP %d%s", ErrRegistration, resp.StatusCode, code)
	}
	if decErr != nil || out.ClientID == "" || len(out.ClientID) > 256 {
		return Registration{}, fmt.Errorf("%w: it answered no usable client id", ErrRegistration)
	}
	r := Registration{ClientID: out.ClientID}
	if out.ClientSecret != "" {
		r.ClientSecret = []byte(out.ClientSecret)
	}
	return r, nil
}

// oauthErrorCode is the shape of an OAuth error code (RFC 6749 §5.2):
// safe to repeat, unlike the rest of a response.
var oauthErrorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// checkEndpoint applies Yett's rule for endpoints that will carry a
// credential: https, or http to loopback.
func checkEndpoint(raw string) error {
	if err := providers.CheckURL("registration_endpoint", raw); err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	return nil
}
