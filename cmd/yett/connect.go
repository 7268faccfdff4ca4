//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/yettdev/yett/backend/oauth"
)

func init() {
	commands["connect"] = command{
		usage:   connectUsage,
		summary: "connect an OAuth account at this terminal (device code, or a printed URL)",
		run:     runConnect,
	}
}

const connectUsage = `usage: yett connect --name NAME --client-id ID --environment development|staging|production
                    (--provider github|google|gitlab|microsoft|slack|atlassian [--tenant T]
                     | --issuer URL | --token-endpoint URL [--authorization-endpoint URL]
                       [--device-endpoint URL] [--revocation-endpoint URL])
                    [--introspection-endpoint URL]
                    [--flow device|code|client-credentials] [--callback-port PORT]
                    [--client-auth none|secret|key] [--client-secret-fd N]
                    [--scope SCOPE ...] [--api-host HOST ...] [--unattended] [--dpop]
                    --owner WHO --backup-revoker WHO [--review-by YYYY-MM-DD]
                    [--disable-procedure TEXT]

Connects an account as the app's Connections view does, with the same
fields and checks, from a terminal without a browser:

  --flow device   (the default) prints a code and the address where you
                  enter it, on any device, and waits.
  --flow code     prints the authorization address for a browser anywhere,
                  and listens on 127.0.0.1 for its return (PKCE S256). With
                  a browser on another machine, choose --callback-port and
                  forward it first: ssh -L PORT:127.0.0.1:PORT this-host.
                  Register http://127.0.0.1/callback with the provider.
  --flow client-credentials   a service identity; completes at once.

--client-auth secret asks for the client secret at the terminal with echo
off (or reads it from --client-secret-fd N); key makes a key pair and prints
the public JWKS to register. --unattended asks for offline access and keeps
a refresh token (sealed in the vault). Without an owner and a backup revoker
the account is flagged "not under control", as in the app.

Refuses unless standard input is your own controlling terminal and while
the app or yett serve runs; the connection is recorded in the audit log
with "terminal" as its surface.
`

var connectFlows = map[string]string{
	"device": oauth.FlowDeviceCode, "code": oauth.FlowAuthorizationCode, "client-credentials": oauth.FlowClientCredentials,
}

var connectAuths = map[string]string{
	"none": oauth.ClientAuthNone, "secret": oauth.ClientAuthSecret, "key": oauth.ClientAuthPrivateKeyJWT,
}

func runConnect(ctx context.Context, env *Env, args []string) error {
	req, secretFD, err := connectRequest(env, args)
	if err != nil {
		return err
	}
	s, err := openSetup(ctx, env, "connect", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	m := s.k.State().OAuth
	if m == nil {
		return errors.New("connect: OAuth custody did not start (see the messages above)")
	}
	if err := s.clientCredential(ctx, m, &req, secretFD); err != nil {
		return err
	}
	defer clear(req.ClientSecret)
	if req.Owner == "" || req.BackupRevoker == "" {
		s.tty.Printf("Without an owner and a backup revoker this account is flagged not under control.\n")
	}
	f, err := s.connectAndWait(ctx, m, req)
	if err != nil {
		return err
	}
	if err := s.recorded(); err != nil {
		return err
	}
	account := ""
	if list, err := m.Authorizations(); err == nil {
		for _, a := range list {
			if a.ID == f.AuthorizationID && a.AccountRef != "" {
				account = " as " + a.AccountRef
			}
		}
	}
	fmt.Fprintf(env.Stdout, "Connected %q (%s)%s. Define what agents may do with it: yett operation add --account %s ...\n",
		req.Name, f.AuthorizationID, account, f.AuthorizationID)
	return nil
}

// connectRequest reads yett connect's flags into a request and checks
// everything that can be checked before anything opens: usage problems
// exit 2. secretFD is -1 unless the client secret comes from a descriptor.
func connectRequest(env *Env, args []string) (req oauth.ConnectRequest, secretFD int, err error) {
	fs := flag.NewFlagSet("yett connect", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, connectUsage) }
	var scopes, apiHosts listFlag
	fs.StringVar(&req.Name, "name", "", "a name for the account")
	provider := fs.String("provider", "", "a preset provider")
	fs.StringVar(&req.Tenant, "tenant", "", "the tenant (microsoft)")
	fs.StringVar(&req.Endpoints.Issuer, "issuer", "", "the issuer (endpoints are discovered)")
	fs.StringVar(&req.Endpoints.TokenEndpoint, "token-endpoint", "", "token endpoint")
	fs.StringVar(&req.Endpoints.AuthorizationEndpoint, "authorization-endpoint", "", "authorization endpoint")
	fs.StringVar(&req.Endpoints.DeviceAuthorizationEndpoint, "device-endpoint", "", "device authorization endpoint")
	fs.StringVar(&req.Endpoints.RevocationEndpoint, "revocation-endpoint", "", "revocation endpoint")
	fs.StringVar(&req.Endpoints.IntrospectionEndpoint, "introspection-endpoint", "", "introspection endpoint")
	fs.StringVar(&req.ClientID, "client-id", "", "the client id registered with the provider")
	auth := fs.String("client-auth", "none", "none, secret or key")
	fs.IntVar(&secretFD, "client-secret-fd", -1, "read the client secret from this file descriptor")
	fs.Var(&scopes, "scope", "a scope to ask for (repeat for more)")
	fs.Var(&apiHosts, "api-host", "a host of the account's API, where operations may send its token (repeat for more; a preset knows its own)")
	fs.StringVar(&req.Environment, "environment", "", "development, staging or production")
	flow := fs.String("flow", "device", "device, code or client-credentials")
	fs.IntVar(&req.CallbackPort, "callback-port", 0, "code flow: the loopback port to listen on")
	fs.BoolVar(&req.Unattended, "unattended", false, "keep a refresh token for calls while nobody is at the machine")
	fs.BoolVar(&req.DPoP, "dpop", false, "bind tokens to a key (DPoP)")
	fs.StringVar(&req.Owner, "owner", "", "who owns the account")
	fs.StringVar(&req.BackupRevoker, "backup-revoker", "", "who else may revoke it")
	reviewBy := fs.String("review-by", "", "review date, YYYY-MM-DD")
	fs.StringVar(&req.DisableProcedure, "disable-procedure", "", "how to disable it, in words")
	if err := fs.Parse(args); err != nil {
		return req, -1, withExitCode(2, err)
	}
	req.Flow, req.ClientAuth = connectFlows[*flow], connectAuths[*auth]
	req.Provider = "custom"
	if *provider != "" {
		req.Provider = *provider
	}
	req.Scopes = scopes
	req.APIHosts = apiHosts
	bad := func(why string) (oauth.ConnectRequest, int, error) {
		fs.Usage()
		return req, -1, withExitCode(2, fmt.Errorf("connect: %s", why))
	}
	switch {
	case fs.NArg() != 0:
		return bad("unexpected arguments")
	case req.Flow == "" || req.ClientAuth == "":
		return bad("--flow is device, code or client-credentials; --client-auth is none, secret or key")
	case req.Name == "" || req.ClientID == "" || !slices.Contains(oauth.Environments, req.Environment):
		return bad("--name, --client-id and --environment (development, staging or production) are required")
	case req.Provider == "custom" && req.Endpoints.Issuer == "" && req.Endpoints.TokenEndpoint == "":
		return bad("name a --provider, an --issuer or the endpoints")
	case secretFD >= 0 && req.ClientAuth != oauth.ClientAuthSecret:
		return bad("--client-secret-fd goes with --client-auth secret")
	}
	if *reviewBy != "" {
		d, err := time.Parse(time.DateOnly, *reviewBy)
		if err != nil {
			return bad("--review-by is a date like 2027-01-31")
		}
		req.ReviewBy = d
	}
	return req, secretFD, nil
}

// clientCredential gets what the client authenticates with: its secret, at
// the terminal or from secretFD, or a key Yett makes, whose public half the
// person registers with the provider before going on.
func (s *setup) clientCredential(ctx context.Context, m *oauth.Custody, req *oauth.ConnectRequest, secretFD int) error {
	switch req.ClientAuth {
	case oauth.ClientAuthSecret:
		secret, err := readSecret(ctx, s, secretFD, "Client secret (not shown as you type): ")
		if err != nil {
			return err
		}
		req.ClientSecret = secret
	case oauth.ClientAuthPrivateKeyJWT:
		key, err := m.NewClientKey()
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		req.ClientKeyID = key.ID
		s.tty.Printf("Register this public key set (JWKS) with the provider for client %s:\n%s\n", req.ClientID, key.JWKS)
		if _, err := s.tty.Line(ctx, "Press Enter once it is registered. "); err != nil {
			return fmt.Errorf("connect: %w", err)
		}
	}
	return nil
}

// connectAndWait starts the connection and, for a flow that waits on the
// person, shows what to do and waits for it to end; it returns the flow
// only once connected.
func (s *setup) connectAndWait(ctx context.Context, m *oauth.Custody, req oauth.ConnectRequest) (oauth.FlowView, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	f, err := m.Connect(cctx, req)
	cancel()
	if err != nil {
		return f, fmt.Errorf("connect: %w", err)
	}
	return s.waitFlow(ctx, m, f)
}

// waitFlow shows what to do for a flow that waits on the person and waits
// for it to end; it returns the flow only once connected.
func (s *setup) waitFlow(ctx context.Context, m *oauth.Custody, f oauth.FlowView) (oauth.FlowView, error) {
	if f.State == oauth.FlowWaiting {
		s.showFlow(f)
		end, err := m.WaitFlow(ctx, f.ID)
		if err != nil || ctx.Err() != nil {
			m.CancelFlow(f.ID)
			return f, errors.New("connect: cancelled; nothing was stored")
		}
		f = end
	}
	if f.State != oauth.FlowConnected {
		return f, fmt.Errorf("connect: the connection %s: %s", f.State, orText(f.Error, "no reason given"))
	}
	return f, nil
}

// showFlow tells the person what to do for a flow that waits on them.
func (s *setup) showFlow(f oauth.FlowView) {
	left := time.Until(f.ExpiresAt).Round(time.Minute)
	switch f.Flow {
	case oauth.FlowDeviceCode:
		s.tty.Printf("On any device, open %s and enter the code\n\n    %s\n\n", f.VerificationURI, f.UserCode)
		if f.VerificationURIComplete != "" {
			s.tty.Printf("(or open %s)\n", f.VerificationURIComplete)
		}
	default:
		s.tty.Printf("Open this address in a browser, review the account and scopes, and consent:\n\n    %s\n\n", f.AuthorizationURL)
		if port := loopbackPort(f.AuthorizationURL); port != "" {
			s.tty.Printf("The browser comes back to 127.0.0.1:%s on this machine. From a browser on another machine, forward it first:\n    ssh -L %s:127.0.0.1:%s <this host>\n", port, port, port)
		}
	}
	s.tty.Printf("Waiting for the provider (up to %s; Ctrl-C cancels)...\n", left)
}

// loopbackPort is the port of the redirect_uri in an authorization URL.
func loopbackPort(authURL string) string {
	u, err := url.Parse(authURL)
	if err != nil {
		return ""
	}
	r, err := url.Parse(u.Query().Get("redirect_uri"))
	if err != nil || r.Hostname() != "127.0.0.1" {
		return ""
	}
	return r.Port()
}
