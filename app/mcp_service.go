package app

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
)

// Events of MCP servers. EventMCPChanged has no payload: a server was
// added, edited or removed, or its state or tools changed; the UI re-reads
// the list. EventMCPConnect carries an MCPConnectResult.
const (
	EventMCPChanged = "mcp:changed"
	EventMCPConnect = "mcp:connect"
)

// MCPService is bound to the UI as window.go.app.MCPService: the upstream
// MCP servers whose tools Yett gives agents (backend/upstream, run by the
// keeper where the gateway runs). Views name a server's secrets, never
// their values; the secrets coming in (environment variables, headers, a
// client secret) are wiped once stored.
type MCPService struct {
	v      *vault.Vault
	k      *keeper.Keeper
	events *eventSink
	log    *slog.Logger
	unsub  []func()
	// inventory is the owner inventory, whose verdict on whether a server
	// is under control the view shows.
	inventory *InventoryService

	mu      sync.Mutex
	waiters context.Context
	stop    context.CancelFunc
}

func newMCPService(v *vault.Vault, k *keeper.Keeper, events *eventSink, log *slog.Logger) *MCPService {
	s := &MCPService{v: v, k: k, events: events, log: log}
	s.waiters, s.stop = context.WithCancel(context.Background())
	s.unsub = append(s.unsub, v.Subscribe(func(e vault.Event) {
		if strings.HasPrefix(string(e.Change), "mcp_server_") || e.Kind != vault.EventChanged {
			s.events.send(EventMCPChanged, nil)
		}
	}))
	if k != nil {
		s.unsub = append(s.unsub, k.SubscribeUpstreams(func() { s.events.send(EventMCPChanged, nil) }))
	}
	return s
}

func (s *MCPService) close() {
	if s == nil {
		return
	}
	s.stop()
	for _, u := range s.unsub {
		u()
	}
}

// Servers lists every server, by name, with how it is doing and its tools.
func (s *MCPService) Servers() ([]MCPServerView, error) {
	list, err := s.v.MCPServers().List()
	if err != nil {
		return nil, s.publicError(err)
	}
	var statuses map[string]upstream.Status
	var tools map[string][]upstream.Tool
	if m := s.k.Upstreams(); m != nil {
		statuses, tools = map[string]upstream.Status{}, map[string][]upstream.Tool{}
		for _, st := range m.Statuses() {
			statuses[st.ID] = st
		}
		for _, t := range m.Tools() {
			tools[t.Server.ID] = append(tools[t.Server.ID], t)
		}
	}
	names := s.authorizationNames()
	out := make([]MCPServerView, 0, len(list))
	for _, v := range list {
		view := mcpServerView(v)
		view.AuthorizationName = names[v.OAuth]
		if st, ok := statuses[v.ID]; ok {
			view.State, view.Problem, view.Hidden = st.State, st.Problem, nonNil(st.Hidden)
		}
		for _, t := range tools[v.ID] {
			a, _ := v.Tools[t.Upstream]
			view.Tools = append(view.Tools, MCPToolView{Name: t.Upstream, ReadOnlyHint: t.ReadOnly, Approval: string(a),
				AsksEachCall: v.ToolApproval(t.Upstream).AsksEachCall(t.ReadOnly)})
		}
		out = append(out, view)
	}
	s.overlayInventory(out)
	return out, nil
}

// authorizationNames are the names of the OAuth accounts, by id.
func (s *MCPService) authorizationNames() map[string]string {
	out := map[string]string{}
	m := s.k.State().OAuth
	if m == nil {
		return out
	}
	list, err := m.Authorizations()
	if err != nil {
		return out
	}
	for _, a := range list {
		out[a.ID] = a.Name
	}
	return out
}

// overlayInventory lays the owner inventory's verdict over each server.
func (s *MCPService) overlayInventory(views []MCPServerView) {
	if len(views) == 0 || s.inventory == nil {
		return
	}
	byID := s.inventory.rowsByID(s.log, "MCP servers")
	for i := range views {
		if r, ok := byID[views[i].ID]; ok {
			views[i].Controlled = r.Controlled
			views[i].Problems = append(views[i].Problems, inventoryProblems(r)...)
		}
	}
}

// newServer turns the form into the server to add, its secrets copied
// into vault secrets (the caller wipes them) and the form's wiped.
func newServer(form *MCPServerForm) (vault.NewMCPServer, error) {
	ns := vault.NewMCPServer{Name: strings.TrimSpace(form.Name), Transport: form.Transport, Args: form.Args,
		URL: strings.TrimSpace(form.URL), MCPServerSettings: form.Settings.settings()}
	if len(form.Secrets) > 0 {
		ns.Secrets = map[string]vault.Secret{}
	}
	for i := range form.Secrets {
		f := &form.Secrets[i]
		if f.Name != "" {
			ns.Secrets[f.Name] = vault.NewSecret([]byte(f.Value))
		}
		f.Value = ""
	}
	if len(form.Env) > 0 {
		ns.Env = map[string]string{}
		for _, f := range form.Env {
			if f.Name != "" {
				ns.Env[f.Name] = f.Value
			}
		}
	}
	if form.Transport == vault.TransportStdio && form.Command != "" {
		// A bare name is looked up in PATH now, once: what Yett starts
		// does not follow a later PATH.
		cmd, err := exec.LookPath(form.Command)
		if err != nil {
			return ns, shown("Yett cannot find the command " + clipText(form.Command, 200) + ": give its full path.")
		}
		if ns.Command, err = filepath.Abs(cmd); err != nil {
			return ns, shown("Yett cannot find the command " + clipText(form.Command, 200) + ": give its full path.")
		}
	}
	return ns, nil
}

func wipeSecrets(ns vault.NewMCPServer) {
	for _, sec := range ns.Secrets {
		sec.Wipe()
	}
}

// AddServer adds a local server, or a remote one with secret headers or
// none. A remote server behind OAuth is added by ConnectServer.
func (s *MCPService) AddServer(form MCPServerForm) (MCPServerView, error) {
	ns, err := newServer(&form)
	defer wipeSecrets(ns)
	form.ClientSecret = ""
	if err != nil {
		return MCPServerView{}, err
	}
	if form.OAuth {
		return MCPServerView{}, shown("A server behind OAuth is connected, not added: its account is consented in the browser first.")
	}
	v, err := s.v.MCPServers().Add(ns)
	if err != nil {
		return MCPServerView{}, s.publicError(err)
	}
	return mcpServerView(v), s.recordEnvironment(v, form.Environment)
}

// recordEnvironment writes the environment the form named on the server's
// inventory row (the inventory keeps it; the server's record keeps its
// owner and backup revoker), so a server added with all three is under
// control from the start.
func (s *MCPService) recordEnvironment(v vault.MCPServerView, env string) error {
	return s.inventory.declare(v.ID, v.Name, "", "", env)
}

// ConnectServer starts adding a remote server behind OAuth: Yett asks the
// server how it is authorized, registers itself with its authorization
// server unless a client id is given, and opens the consent in the
// browser. EventMCPConnect reports the end: once the account is connected
// the server is added with it (or the account is revoked again if the
// server cannot be added).
func (s *MCPService) ConnectServer(form MCPServerForm) (MCPConnectView, error) {
	ns, err := newServer(&form)
	// The secrets are wiped here unless the connection started: then the
	// wait for the browser (follow) holds them until the server is added.
	handed := false
	defer func() {
		if !handed {
			wipeSecrets(ns)
		}
	}()
	secret := []byte(form.ClientSecret)
	form.ClientSecret = ""
	defer wipe(secret)
	if err != nil {
		return MCPConnectView{}, err
	}
	ns.OAuth = "az-pending"
	if err := vault.CheckMCPServer(ns); err != nil {
		return MCPConnectView{}, s.publicError(err)
	}
	if _, err := s.v.MCPServers().ByName(ns.Name); err == nil {
		return MCPConnectView{}, shown("An MCP server named " + ns.Name + " exists.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	f, err := s.k.ConnectMCPServerOAuth(ctx, upstream.OAuthRequest{
		Server: ns.Name, URL: ns.URL, ClientID: strings.TrimSpace(form.ClientID), ClientSecret: secret, Environment: form.Environment,
		Owner: ns.Owner, BackupRevoker: ns.BackupRevoker,
	})
	if err != nil {
		return MCPConnectView{}, s.publicError(err)
	}
	// The server is added once the browser comes back, with its secret
	// headers, if any, as given.
	s.follow(f.Flow, ns, form.Environment)
	handed = true
	return MCPConnectView{Flow: flowView(f.Flow), Server: ns.Name, Issuer: f.Discovery.Issuer, Resource: f.Discovery.Resource,
		Scopes: nonNil(f.Discovery.Scopes), Registered: f.Registered}, nil
}

// follow waits for the consent, then adds the server with its account.
func (s *MCPService) follow(f oauth.FlowView, ns vault.NewMCPServer, envOf string) {
	m := s.k.State().OAuth
	go func() {
		defer wipeSecrets(ns)
		res := MCPConnectResult{FlowID: f.ID}
		end, err := m.WaitFlow(s.waiters, f.ID)
		switch {
		case err != nil:
			return // Yett is closing
		case end.State != oauth.FlowConnected:
			res.Error = "The account was not connected (" + end.State + "): " + orDefault(end.Error, "no reason given") + ". Nothing was added."
		default:
			ns.OAuth = end.AuthorizationID
			v, err := s.v.MCPServers().Add(ns)
			if err != nil {
				// The account would serve nothing: it goes, at the
				// provider too, rather than stay a grant no server uses.
				m.Revoke(context.Background(), end.AuthorizationID)
				res.Error = s.publicError(err).Error() + " The account just connected was revoked."
				break
			}
			res.ServerID = v.ID
			if err := s.recordEnvironment(v, envOf); err != nil {
				res.Error = err.Error()
			}
		}
		s.events.send(EventMCPConnect, res)
	}()
}

// UpdateServer replaces a server's settings (approval modes, who answers
// for it) without restarting it.
func (s *MCPService) UpdateServer(id string, settings MCPSettingsForm) (MCPServerView, error) {
	v, err := s.v.MCPServers().Update(id, settings.settings())
	if err != nil {
		return MCPServerView{}, s.publicError(err)
	}
	return mcpServerView(v), nil
}

// RemoveServer deletes a server: its process stops and its tools leave
// every agent's list. An OAuth account it used stays in Connections.
func (s *MCPService) RemoveServer(id string) error {
	return s.publicError(s.v.MCPServers().Remove(id))
}

var mcpTexts = []known{
	{vault.ErrCredentialChanged, "This server changed since the page was read (another window or a terminal changed it). Nothing was saved; try again."},
	{context.DeadlineExceeded, "The server or its authorization server did not answer in time; nothing was stored."},
	{upstream.ErrNoAuthAsked, "This server answered without asking for authorization: add it without OAuth (with a secret header, or none)."},
	{upstream.ErrNoResourceMetadata, "This server asks for authorization but says nowhere how (no protected resource metadata, RFC 9728). Add it with a secret header instead."},
	{upstream.ErrAuthServerMetadata, "The authorization server this server names publishes no usable metadata (RFC 8414); details are in the Yett log."},
	{err: upstream.ErrRegistration},
	{keeper.ErrNoCustody, "OAuth connections are unavailable: see the Yett log."},
	{err: vault.ErrInvalid}, {err: vault.ErrLocked}, {err: vault.ErrNotInitialised},
	{err: vault.ErrNoMCPServer}, {err: vault.ErrMCPServerExists},
	{err: oauth.ErrInvalid}, {err: oauth.ErrFlow}, {err: oauth.ErrTransient},
}

// publicError chooses the text the UI shows for err. A registration's
// own text quotes nothing the server sent (TestRegister); the other
// discovery errors are logged and said in fixed words.
func (s *MCPService) publicError(err error) error {
	if errors.Is(err, upstream.ErrNoResourceMetadata) || errors.Is(err, upstream.ErrAuthServerMetadata) {
		s.log.Warn("MCP server authorization discovery failed", "err", err)
	}
	return publicError(s.log, "MCP server operation", err, mcpTexts)
}

func clipText(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "")
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
