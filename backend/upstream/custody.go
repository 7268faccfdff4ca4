package upstream

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/oauth"
)

// DialFunc is a guarded dialer maker: (*action.Executor).GuardedDial.
type DialFunc = func(allowInternal bool) func(ctx context.Context, network, address string) (net.Conn, error)

// Custody is OAuth custody as the manager's Authorizations: a server's
// authorization serves when custody's Check says so, and its tokens are
// custody's leases (refreshed once at a time, rotation stored first).
func Custody(m *oauth.Custody) Authorizations { return custody{m} }

type custody struct{ m *oauth.Custody }

func (c custody) Usable(id string) error {
	_, err := c.m.Check(id)
	return err
}

func (c custody) Token(ctx context.Context, id, op string) (Token, error) {
	l, err := c.m.Acquire(ctx, id, op)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (c custody) Subscribe(fn func()) (cancel func()) {
	return c.m.Subscribe(func(oauth.Event) { fn() })
}

// OAuthRequest is what a person gives to connect the OAuth
// authorization of a remote MCP server.
type OAuthRequest struct {
	Server string // the server's name, the prefix of its tools
	URL    string
	// ClientID is a client the person registered with the server's
	// authorization server; "" registers Yett dynamically (RFC 7591).
	// ClientSecret goes with a confidential one (sealed at once).
	ClientID     string
	ClientSecret []byte
	// Scopes replace the ones the server asks for; none takes those.
	Scopes        []string
	Environment   string
	Owner         string
	BackupRevoker string
	// CallbackPort is the loopback port the browser comes back to; 0
	// picks a free one.
	CallbackPort int
}

// OAuthFlow is a started connection of an MCP server's authorization.
type OAuthFlow struct {
	Flow      oauth.FlowView
	Discovery AuthDiscovery
	// Registered says Yett registered itself as a client dynamically.
	Registered bool
}

// ConnectOAuth discovers how the remote MCP server at req.URL is
// authorized (its protected resource metadata, its authorization server),
// registers Yett as a client there when no client id is given, and starts
// the person's consent under OAuth custody with the server's URL as the
// resource its tokens are for. Every request it makes goes through the
// guarded dialer the server itself is reached with: an address the server
// names cannot turn Yett towards an internal one the person did not name.
// The caller waits for the flow and defines the server with its
// authorization once it is connected.
func ConnectOAuth(ctx context.Context, m *oauth.Custody, dial DialFunc, tlsConfig *tls.Config, req OAuthRequest) (OAuthFlow, error) {
	u, err := url.Parse(req.URL)
	if err != nil || u.Host == "" {
		return OAuthFlow{}, fmt.Errorf("%w: the server's URL does not parse", oauth.ErrInvalid)
	}
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy: nil, DialContext: dial(action.NamesInternal(u.Hostname())),
			TLSClientConfig: tlsConfig.Clone(), TLSHandshakeTimeout: 10 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	d, err := DiscoverAuth(ctx, client, req.URL)
	if err != nil {
		return OAuthFlow{}, err
	}
	out := OAuthFlow{Discovery: *d}
	port := req.CallbackPort
	cr := oauth.ConnectRequest{
		Name: "MCP server " + req.Server, Provider: "custom", Endpoints: oauth.Endpoints{Issuer: d.Issuer},
		ClientID: req.ClientID, ClientAuth: oauth.ClientAuthNone, Scopes: d.Scopes, Environment: req.Environment,
		Unattended: true, Flow: oauth.FlowAuthorizationCode, Owner: req.Owner, BackupRevoker: req.BackupRevoker,
		APIHosts: []string{u.Host}, Resource: d.Resource,
	}
	if len(req.Scopes) > 0 {
		cr.Scopes = slices.Clone(req.Scopes)
	}
	if len(req.ClientSecret) > 0 {
		cr.ClientAuth, cr.ClientSecret = oauth.ClientAuthSecret, req.ClientSecret
	}
	if req.ClientID == "" {
		// A registered redirect is exact at most authorization servers:
		// the port is chosen now and the flow listens on it.
		if port == 0 {
			if port, err = freeLoopbackPort(); err != nil {
				return OAuthFlow{}, err
			}
		}
		reg, err := Register(ctx, client, d, fmt.Sprintf("http://127.0.0.1:%d/callback", port))
		if err != nil {
			return OAuthFlow{}, err
		}
		defer clear(reg.ClientSecret)
		cr.ClientID = reg.ClientID
		if len(reg.ClientSecret) > 0 {
			cr.ClientAuth, cr.ClientSecret = oauth.ClientAuthSecret, reg.ClientSecret
		}
		out.Registered = true
	}
	cr.CallbackPort = port
	out.Flow, err = m.Connect(ctx, cr)
	return out, err
}

// freeLoopbackPort is a port on 127.0.0.1 free a moment ago.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("upstream: no loopback port for the redirect: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
