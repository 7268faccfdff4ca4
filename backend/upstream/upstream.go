// Package upstream is Yett as an MCP client: it keeps a session with each
// upstream MCP server a person defined in the vault (a local server Yett
// starts itself over stdio, or a remote one over Streamable HTTP), lists
// their tools under the server's name, and calls them for the gateway's
// pipeline, which decides first whether the call may happen at all.
//
// The servers' secrets stay in Yett and the servers: a stdio server gets
// them in its own environment (Yett's child, never the agent's), a remote
// one in the headers of Yett's own requests. Everything a server returns is
// redacted of those secrets, in every encoding the HTTP executor's redactor
// finds, before it leaves this package. A vault lock stops every server at
// once: its process is ended and its session closed, and calls in flight
// are cut with it.
package upstream

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/feed"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/version"
)

// Defaults.
const (
	DefaultMaxResultBytes = 8 << 20
	DefaultStartTimeout   = 30 * time.Second
	// frameSlack is how far past the result cap one frame of a stdio
	// server may go before the session is ended: a result a little above
	// the cap is cut and flagged, a flood is refused.
	frameSlack = 4
)

// Errors of Call. Only ErrLost means the call may have reached the server.
var (
	// ErrNotReady: the server is not connected (starting, stopped, failed)
	// or was edited since the tool was listed. Nothing was sent.
	ErrNotReady = errors.New("upstream: the server is not ready; nothing was sent")
	// ErrLost: the session broke after the call was sent (the server died
	// or its connection failed). It may have run.
	ErrLost = errors.New("upstream: the connection to the server broke while the call was in flight")
	// ErrWithheld: the server answered, and Yett could not pass the answer
	// on safely (redacting it left something that is not a tool result).
	ErrWithheld = errors.New("upstream: the server's answer was withheld")
)

// Resolver-checked dialing and redaction come from backend/action.
type Config struct {
	Vault *vault.Vault
	// Dial is how a remote server is reached: (*action.Executor).GuardedDial.
	Dial   DialFunc
	Logger *slog.Logger
	// BaseEnv names the variables of Yett's own environment a stdio server
	// inherits (PATH, HOME, ...). nil takes DefaultBaseEnv. Nothing else of
	// Yett's environment reaches a server.
	BaseEnv        []string
	MaxResultBytes int
	StartTimeout   time.Duration
	// TLSClientConfig is for tests that trust their own CA; nil means the
	// system roots.
	TLSClientConfig *tls.Config
	// HTTPTransport overrides the transport of remote servers (tests).
	HTTPTransport http.RoundTripper
	// Authorizations lends the access tokens of servers with an OAuth
	// authorization (OAuth custody); nil refuses to start them.
	Authorizations Authorizations
}

// Authorizations is OAuth custody as the manager uses it.
type Authorizations interface {
	// Usable says, from local state only, whether authorization id may
	// serve now (nil), or why not: suspended by a drill, disabled,
	// revoked, or waiting for its owner to reconnect.
	Usable(id string) error
	// Token lends a fresh access token for one request, refreshing it
	// first when needed (once at a time for every caller); op names what
	// needed it, for the audit log.
	Token(ctx context.Context, id, op string) (Token, error)
	// Subscribe calls fn after any authorization changed.
	Subscribe(fn func()) (cancel func())
}

// Token is one lent access token.
type Token interface {
	WithSecret(ctx context.Context, use func(secret []byte) error) error
	// Release wipes the lent copy; used says the server accepted it.
	Release(used bool)
	// Invalidate drops the token where the server refused it (401): the
	// next request refreshes.
	Invalidate()
}

// DefaultBaseEnv are the variables a stdio server inherits from Yett.
var DefaultBaseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR", "TZ",
	"SYSTEMROOT", "WINDIR", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "TEMP", "TMP", "COMSPEC", "PATHEXT"}

// States of a server.
const (
	StateStarting = "starting"
	StateReady    = "ready"
	StateFailed   = "failed"
)

// Status is what the app and the CLI show of a server: no secret, no
// result.
type Status struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Transport string    `json:"transport"`
	State     string    `json:"state"`
	Problem   string    `json:"problem,omitempty"`
	Tools     []string  `json:"tools"`
	Hidden    []string  `json:"hidden,omitempty"` // tools not re-exported, with why
	PID       int       `json:"pid,omitempty"`
	Since     time.Time `json:"since"`
}

// Tool is one upstream tool as agents see it.
type Tool struct {
	Name     string // "server.tool"
	Server   vault.MCPServerView
	Upstream string    // the upstream's own name
	Listed   *mcp.Tool // the tool as Yett lists it
	// ReadOnly is the upstream's readOnlyHint: an untrusted hint, which
	// the person's approval mode for the tool overrides.
	ReadOnly bool
}

// Approval is how calls of the tool are approved: the person's word for
// the tool, else the server's mode.
func (t Tool) Approval() vault.Approval { return t.Server.ToolApproval(t.Upstream) }

// AsksEachCall says whether every call needs a card of its own.
func (t Tool) AsksEachCall() bool { return t.Approval().AsksEachCall(t.ReadOnly) }

// Result is a tool result fit to reach an agent: redacted, and cut at the
// cap.
type Result struct {
	Result *mcp.CallToolResult
	// Bytes is the size of the upstream's answer as it came (JSON), and
	// SHA256 the hex digest of that answer once redacted.
	Bytes  int
	SHA256 string
	// Truncated says the result was cut at the cap.
	Truncated bool
	// ProtocolError says the server refused the call with a JSON-RPC error
	// (an unknown tool, invalid arguments): it answered, nothing ran that
	// it admits to.
	ProtocolError bool
}

// Manager keeps the sessions with every upstream server.
type Manager struct {
	cfg   Config
	log   *slog.Logger
	feed  feed.Feed[struct{}]
	unsub func()

	mu     sync.Mutex
	live   map[string]*live // by server id
	closed bool
}

// live is one server's session, from its start to its stop.
type live struct {
	m *Manager
	// view is the server as it was started: how it is reached never
	// changes for a live (an edit of that starts a new one). cur is the
	// record now: an edit of its settings only (approval modes, who
	// answers for it) moves cur and keeps the server running.
	view   vault.MCPServerView
	cur    atomic.Pointer[vault.MCPServerView]
	ctx    context.Context
	cancel context.CancelFunc
	// secrets are copies of the server's secrets for redaction, wiped at
	// stop; secMu is held to read them, so a wipe never races a redaction.
	secMu   sync.RWMutex
	secrets [][]byte
	// tokens are copies of the last access tokens sent to an OAuth
	// server, for redaction too: a server may echo one after the next
	// refresh.
	tokens [][]byte
	// authChanged wakes a server waiting for its OAuth authorization to
	// serve again.
	authChanged chan struct{}

	mu      sync.Mutex
	state   string
	problem string
	since   time.Time
	session *mcp.ClientSession
	tools   []Tool
	hidden  []string
	proc    *process
}

// New returns a manager; Start begins following the vault.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.BaseEnv == nil {
		cfg.BaseEnv = DefaultBaseEnv
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	return &Manager{cfg: cfg, log: cfg.Logger, live: map[string]*live{}}
}

// Start follows the vault: every server starts at unlock and on its
// addition, restarts on its edit, and stops on its removal and at lock.
func (m *Manager) Start() {
	m.unsub = m.cfg.Vault.Subscribe(func(ev vault.Event) {
		if ev.Kind == vault.EventChanged && !strings.HasPrefix(string(ev.Change), "mcp_server_") {
			return
		}
		m.sync()
	})
	if a := m.cfg.Authorizations; a != nil {
		cancel := a.Subscribe(m.authorizationsChanged)
		unsub := m.unsub
		m.unsub = func() { unsub(); cancel() }
	}
	m.sync()
}

// authorizationsChanged ends the session of every server whose OAuth
// authorization can no longer serve (a drill suspended it, it was revoked
// or disabled, it needs its owner): its tools go at once, and it waits
// until the authorization serves again. A server waiting is woken.
func (m *Manager) authorizationsChanged() {
	for _, l := range m.lives() {
		if l.view.OAuth == "" {
			continue
		}
		select {
		case l.authChanged <- struct{}{}:
		default:
		}
		if m.cfg.Authorizations.Usable(l.view.OAuth) == nil {
			continue
		}
		l.mu.Lock()
		s := l.session
		l.tools = nil
		if l.state == StateReady {
			l.state, l.problem, l.since = StateFailed, "its OAuth authorization cannot serve", time.Now()
		}
		l.mu.Unlock()
		m.changed()
		if s != nil {
			s.Close()
		}
	}
}

// Close stops every server.
func (m *Manager) Close() {
	if m.unsub != nil {
		m.unsub()
	}
	m.mu.Lock()
	m.closed = true
	lives := m.live
	m.live = map[string]*live{}
	m.mu.Unlock()
	for _, l := range lives {
		l.stop()
	}
}

// Subscribe registers fn for every change of the tools listed.
func (m *Manager) Subscribe(fn func()) (cancel func()) {
	return m.feed.Subscribe(func(struct{}) { fn() })
}

func (m *Manager) changed() { m.feed.Publish(struct{}{}) }

// sync makes the running servers match the vault's: none while it is
// locked.
func (m *Manager) sync() {
	var want []vault.MCPServerView
	if m.cfg.Vault.Status().State == vault.StateUnlocked {
		want, _ = m.cfg.Vault.MCPServers().List()
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	keep := map[string]bool{}
	var stop []*live
	var start []*live
	changed := false
	for _, v := range want {
		keep[v.ID] = true
		if l, ok := m.live[v.ID]; ok && l.current().Version == v.Version {
			continue
		} else if ok && sameConnection(l.view, v) {
			l.settingsChanged(v)
			changed = true
			continue
		} else if ok {
			stop = append(stop, l)
		}
		l := m.newLive(v)
		m.live[v.ID] = l
		start = append(start, l)
	}
	for id, l := range m.live {
		if !keep[id] {
			stop = append(stop, l)
			delete(m.live, id)
		}
	}
	m.mu.Unlock()
	for _, l := range stop {
		l.stop()
	}
	for _, l := range start {
		go l.run()
	}
	if len(stop) > 0 || changed {
		m.changed()
	}
}

// sameConnection says whether two versions of a server's record start or
// reach it the same way (its command, arguments, environment, URL and the
// secrets it gets): then an edit changed only its settings.
func sameConnection(a, b vault.MCPServerView) bool {
	return a.ID == b.ID && a.Transport == b.Transport && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) && a.URL == b.URL && a.OAuth == b.OAuth && slices.Equal(a.SecretNames, b.SecretNames)
}

func (l *live) current() vault.MCPServerView { return *l.cur.Load() }

// settingsChanged takes the record's new settings without a restart: the
// tools listed carry them from now on.
func (l *live) settingsChanged(v vault.MCPServerView) {
	l.cur.Store(&v)
	l.mu.Lock()
	tools := make([]Tool, len(l.tools))
	for i, t := range l.tools {
		t.Server = v
		tools[i] = t
	}
	l.tools = tools
	l.mu.Unlock()
}

func (m *Manager) newLive(v vault.MCPServerView) *live {
	ctx, cancel := context.WithCancel(context.Background())
	l := &live{m: m, view: v, ctx: ctx, cancel: cancel, state: StateStarting, since: time.Now(), authChanged: make(chan struct{}, 1)}
	l.cur.Store(&v)
	return l
}

// frameCap is the largest frame a server may send: frameSlack results,
// and never less than 4 MiB (a long tools/list).
func (m *Manager) frameCap() int { return max(frameSlack*m.cfg.MaxResultBytes, 4<<20) }

// Tools lists every ready server's tools, by name. A server whose OAuth
// authorization cannot serve now lists none, even in the moment before
// its session is closed.
func (m *Manager) Tools() []Tool {
	var out []Tool
	for _, l := range m.lives() {
		if !l.authorizationServes() {
			continue
		}
		l.mu.Lock()
		out = append(out, l.tools...)
		l.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a listed tool by the name agents call it.
func (m *Manager) Lookup(name string) (Tool, bool) {
	server, _, ok := strings.Cut(name, ".")
	if !ok {
		return Tool{}, false
	}
	l := m.named(server)
	if l == nil {
		return Tool{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// lives are the running servers, in no order.
func (m *Manager) lives() []*live {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Values(m.live))
}

// named is the running server of this name, or nil.
func (m *Manager) named(name string) *live {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.live {
		if l.view.Name == name {
			return l
		}
	}
	return nil
}

// State says how the server of this name is doing (StateStarting,
// StateReady, StateFailed), if it is defined.
func (m *Manager) State(name string) (state string, defined bool) {
	l := m.named(name)
	if l == nil {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state, true
}

// Authorization is the OAuth authorization the server of this name gets
// its tokens from: "" for none, or when no such server runs.
func (m *Manager) Authorization(name string) string {
	if l := m.named(name); l != nil {
		return l.view.OAuth
	}
	return ""
}

// Statuses says how every server is doing, by name.
func (m *Manager) Statuses() []Status {
	lives := m.lives()
	out := make([]Status, 0, len(lives))
	for _, l := range lives {
		out = append(out, l.status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (l *live) status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Status{ID: l.view.ID, Name: l.view.Name, Transport: l.view.Transport, State: l.state, Problem: l.problem,
		Since: l.since, Tools: []string{}, Hidden: slices.Clone(l.hidden)}
	for _, t := range l.tools {
		s.Tools = append(s.Tools, t.Upstream)
	}
	if l.proc != nil {
		s.PID = l.proc.pid()
	}
	return s
}

// run connects the server, lists its tools and watches the session until
// the server stops; a server that ends on its own is started again after
// a pause that doubles up to a minute, for as long as it stays defined and
// the vault unlocked.
func (l *live) run() {
	pause := time.Second
	for l.ctx.Err() == nil {
		if !l.authorized() {
			return
		}
		started := time.Now()
		err := l.connect()
		if l.ctx.Err() != nil {
			return
		}
		if l.view.OAuth != "" && l.m.cfg.Authorizations != nil && l.m.cfg.Authorizations.Usable(l.view.OAuth) != nil {
			// Its authorization stopped serving (a drill, a revocation):
			// it waits for it, not for a pause.
			continue
		}
		problem := l.redactText(problemOf(err))
		l.set(StateFailed, problem)
		l.m.log.Warn("upstream MCP server stopped", "server", l.view.Name, "problem", problem)
		l.m.changed()
		if time.Since(started) > time.Minute {
			pause = time.Second
		}
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Minute)
	}
}

// authorizationServes says whether the server has no OAuth authorization
// or one that serves now.
func (l *live) authorizationServes() bool {
	if l.view.OAuth == "" {
		return true
	}
	a := l.m.cfg.Authorizations
	return a != nil && a.Usable(l.view.OAuth) == nil
}

// authorized waits while the server's OAuth authorization cannot serve,
// with the server failed and why; false when the server stopped meanwhile.
func (l *live) authorized() bool {
	if l.view.OAuth == "" {
		return true
	}
	for {
		a := l.m.cfg.Authorizations
		if a == nil {
			l.set(StateFailed, "its OAuth authorization cannot be used here: OAuth custody is not running")
			l.m.changed()
			<-l.ctx.Done()
			return false
		}
		err := a.Usable(l.view.OAuth)
		if err == nil {
			return true
		}
		problem := "its OAuth authorization cannot serve: " + problemOf(err)
		if l.status().Problem != problem {
			l.set(StateFailed, problem)
			l.m.changed()
		}
		select {
		case <-l.ctx.Done():
			return false
		case <-l.authChanged:
		}
	}
}

func (l *live) set(state, problem string) {
	l.mu.Lock()
	l.state, l.problem, l.since = state, problem, time.Now()
	l.mu.Unlock()
}

// connect runs one session with the server: it returns when the session
// ends, with why.
func (l *live) connect() error {
	secrets, err := l.m.cfg.Vault.MCPServers().SecretsOf(l.view.ID, l.current().Version)
	if err != nil {
		return fmt.Errorf("its record could not be read: %w", err)
	}
	defer func() {
		for _, s := range secrets {
			s.Wipe()
		}
	}()
	l.keepSecrets(secrets)

	var t mcp.Transport
	switch l.view.Transport {
	case vault.TransportStdio:
		p, err := startProcess(l.view, secrets, l.m.cfg.BaseEnv, func(line string) {
			l.m.log.Info("upstream MCP server said", "server", l.view.Name, "stderr", l.redactText(line))
		})
		if err != nil {
			return err
		}
		l.mu.Lock()
		l.proc = p
		l.mu.Unlock()
		t = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin, MaxLineLength: l.m.frameCap()}
	case vault.TransportHTTP:
		ht, err := l.httpTransport(secrets)
		if err != nil {
			return err
		}
		t = ht
	default:
		return fmt.Errorf("unknown transport %q", l.view.Transport)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "yett", Title: "Yett", Version: version.Number()}, &mcp.ClientOptions{
		Logger: l.m.log,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go l.refreshTools()
		},
	})
	cctx, cancel := context.WithTimeout(l.ctx, l.m.cfg.StartTimeout)
	session, err := client.Connect(cctx, t, nil)
	cancel()
	if err != nil {
		l.stopProcess()
		return fmt.Errorf("it did not complete the MCP handshake: %w", err)
	}
	l.mu.Lock()
	l.session = session
	l.mu.Unlock()
	if err := l.refreshTools(); err != nil {
		session.Close()
		l.stopProcess()
		return err
	}
	l.m.log.Info("upstream MCP server ready", "server", l.view.Name)
	err = session.Wait()
	l.mu.Lock()
	// Its tools go and it is not ready, at once: a call in between is told
	// the server is not connected, never that it lists no such tool.
	l.session, l.tools = nil, nil
	if l.state == StateReady {
		l.state, l.problem, l.since = StateFailed, "its session ended", time.Now()
	}
	l.mu.Unlock()
	l.stopProcess()
	if err == nil {
		err = errors.New("it closed the session")
	}
	return err
}

// httpTransport is a remote server's Streamable HTTP client: Yett's own,
// dialing only addresses the action policy allows, never following
// redirects, adding the server's secret headers to each request.
func (l *live) httpTransport(secrets map[string]*vault.Secret) (mcp.Transport, error) {
	u, err := url.Parse(l.view.URL)
	if err != nil {
		return nil, errors.New("its URL does not parse")
	}
	host := u.Hostname()
	if u.Scheme != "https" && (len(secrets) > 0 || l.view.OAuth != "") && !target.PlainHTTPAllowed(host) {
		return nil, errors.New("secrets and tokens travel only over HTTPS, except to loopback")
	}
	base := l.m.cfg.HTTPTransport
	if base == nil {
		if l.m.cfg.Dial == nil {
			return nil, errors.New("no dialer is configured for remote servers")
		}
		base = &http.Transport{
			Proxy: nil, DialContext: l.m.cfg.Dial(action.NamesInternal(host)),
			ForceAttemptHTTP2: true, MaxIdleConns: 4, IdleConnTimeout: 90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second, TLSClientConfig: l.m.cfg.TLSClientConfig.Clone(),
		}
	}
	headers := http.Header{}
	for name, s := range secrets {
		headers.Set(name, string(s.Bytes()))
	}
	var rt http.RoundTripper = &withHeaders{base: base, headers: headers, host: u.Host}
	if l.view.OAuth != "" {
		rt = &withToken{base: rt, l: l}
	}
	return &mcp.StreamableClientTransport{
		Endpoint: l.view.URL,
		HTTPClient: &http.Client{
			Transport:     rt,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		MaxEventSize: l.m.frameCap(),
	}, nil
}

// withHeaders adds the server's secret headers to requests for its own
// host only.
type withHeaders struct {
	base    http.RoundTripper
	headers http.Header
	host    string
}

func (w *withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != w.host {
		return nil, fmt.Errorf("upstream: refusing a request to %s, which is not the server's host", r.URL.Host)
	}
	r = r.Clone(r.Context())
	for k, vs := range w.headers {
		r.Header[k] = vs
	}
	return w.base.RoundTrip(r)
}

// withToken sends each request with an access token of the server's OAuth
// authorization, lent by custody for that request. A 401 drops the token
// and the request is sent once more with a fresh one: the server refused
// it before doing anything.
type withToken struct {
	base http.RoundTripper
	l    *live
}

func (w *withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.send(r)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (r.Body != nil && r.GetBody == nil) {
		return resp, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if r.GetBody != nil {
		body, err := r.GetBody()
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Body = body
	}
	return w.send(r)
}

func (w *withToken) send(r *http.Request) (*http.Response, error) {
	l := w.l
	tok, err := l.m.cfg.Authorizations.Token(r.Context(), l.view.OAuth, "mcp_server "+l.view.Name)
	if err != nil {
		return nil, fmt.Errorf("upstream: its OAuth authorization gave no token: %w", err)
	}
	r = r.Clone(r.Context())
	if err := tok.WithSecret(r.Context(), func(b []byte) error {
		r.Header.Set("Authorization", "Bearer "+string(b))
		l.keepToken(b)
		return nil
	}); err != nil {
		tok.Release(false)
		return nil, fmt.Errorf("upstream: its OAuth authorization gave no token: %w", err)
	}
	resp, err := w.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		tok.Invalidate()
	}
	tok.Release(err == nil && resp.StatusCode < 400)
	return resp, err
}

// maxKeptTokens bounds the access tokens kept for redaction: a token
// lives an hour or so, and the last few cover any a server still echoes.
const maxKeptTokens = 8

// keepToken keeps a copy of an access token sent to the server, for
// redaction, until the server stops.
func (l *live) keepToken(b []byte) {
	l.secMu.Lock()
	defer l.secMu.Unlock()
	if l.ctx.Err() != nil {
		return
	}
	for _, t := range l.tokens {
		if bytes.Equal(t, b) {
			return
		}
	}
	if len(l.tokens) == maxKeptTokens {
		clear(l.tokens[0])
		l.tokens = l.tokens[1:]
	}
	l.tokens = append(l.tokens, slices.Clone(b))
}

var toolNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// refreshTools lists the server's tools again (at connect, and on its
// notifications/tools/list_changed) and tells subscribers.
func (l *live) refreshTools() error {
	l.mu.Lock()
	s := l.session
	l.mu.Unlock()
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(l.ctx, l.m.cfg.StartTimeout)
	defer cancel()
	var tools []Tool
	var hidden []string
	seen := 0
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("it did not list its tools: %w", err)
		}
		if seen++; seen > 1024 {
			hidden = append(hidden, "more than 1024 tools: the rest are not listed")
			break
		}
		name := l.view.Name + "." + t.Name
		if !toolNameRe.MatchString(name) {
			hidden = append(hidden, fmt.Sprintf("%.64q: not a valid tool name", t.Name))
			continue
		}
		tools = append(tools, l.export(t, name))
	}
	l.mu.Lock()
	if l.session == s {
		// Listed and ready at once: a tool an agent can see can be called.
		l.tools, l.hidden = tools, hidden
		if l.state != StateReady {
			l.state, l.problem, l.since = StateReady, "", time.Now()
		}
	}
	l.mu.Unlock()
	l.m.changed()
	return nil
}

// export is the tool as agents see it: the upstream's schema and hints,
// redacted of the server's secrets, its description saying where it
// comes from.
func (l *live) export(t *mcp.Tool, name string) Tool {
	out := &mcp.Tool{
		Name: name, Title: l.redactText(t.Title), InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Description: fmt.Sprintf("%s (tool %q of the MCP server %q, called through Yett)", l.redactText(t.Description), t.Name, l.view.Name),
	}
	readOnly := false
	if t.Annotations != nil {
		a := *t.Annotations
		a.Title = l.redactText(a.Title)
		out.Annotations = &a
		readOnly = a.ReadOnlyHint
	}
	if out.Title == "" {
		out.Title = name
	}
	out.InputSchema = l.redactJSON(out.InputSchema)
	out.OutputSchema = l.redactJSON(out.OutputSchema)
	return Tool{Name: name, Server: l.current(), Upstream: t.Name, Listed: out, ReadOnly: readOnly}
}

func (l *live) stopProcess() {
	l.mu.Lock()
	p := l.proc
	l.proc = nil
	l.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

// stop ends the session and the server's process at once and wipes what
// Yett kept of its secrets.
func (l *live) stop() {
	l.cancel()
	l.mu.Lock()
	s := l.session
	l.session, l.tools = nil, nil
	l.mu.Unlock()
	l.keepSecrets(nil)
	l.stopProcess()
	if s != nil {
		go s.Close()
	}
}

func problemOf(err error) string {
	if err == nil {
		return ""
	}
	return strings.ToValidUTF8(err.Error(), "?")
}

// environ is what a stdio server's environment holds: the named variables
// of Yett's own, the server's values, and its secrets.
func environ(base []string, view vault.MCPServerView, secrets map[string]*vault.Secret) []string {
	var env []string
	for _, k := range base {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range view.Env {
		env = append(env, k+"="+v)
	}
	for k, s := range secrets {
		env = append(env, k+"="+string(s.Bytes()))
	}
	return env
}

// process is a stdio server Yett started: its own child, in its own
// process group.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	done   chan struct{}
	once   sync.Once
}

// stopGrace is how long a server has to end after SIGTERM before its whole
// group is killed.
const stopGrace = 2 * time.Second

// startProcess starts the server's command with the environment environ
// makes, in the user's home directory, its standard error kept out of the
// agents' sight (logged, bounded, redacted).
func startProcess(view vault.MCPServerView, secrets map[string]*vault.Secret, base []string, log func(string)) (*process, error) {
	if !filepath.IsAbs(view.Command) {
		return nil, fmt.Errorf("its command %q is not an absolute path", view.Command)
	}
	cmd := exec.Command(view.Command, view.Args...)
	cmd.Env = environ(base, view, secrets)
	if home, err := os.UserHomeDir(); err == nil {
		cmd.Dir = home
	}
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("its command could not start: %w", err)
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, done: make(chan struct{})}
	go func() {
		// Standard error is read to its end (a server blocked on a full
		// pipe would hang), at most 64 lines of 512 bytes a minute logged.
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 4096), 1<<20)
		logged, window := 0, time.Now()
		for sc.Scan() {
			if time.Since(window) > time.Minute {
				logged, window = 0, time.Now()
			}
			if logged++; logged <= 64 && log != nil {
				line := sc.Bytes()
				if len(line) > 512 {
					line = line[:512]
				}
				log(string(line))
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the server: SIGTERM to its group, SIGKILL to the group after
// stopGrace, and waits for it.
func (p *process) stop() {
	p.once.Do(func() {
		p.stdin.Close()
		signalGroup(p.cmd, false)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
		}
		// What the server started may outlive it: the group goes too.
		signalGroup(p.cmd, true)
		<-p.done
	})
}

// keepSecrets wipes the copies kept for redaction and keeps copies of
// these instead (none at stop). A header's value "Bearer <token>" is kept
// as the token alone too: that is what a server echoes.
func (l *live) keepSecrets(secrets map[string]*vault.Secret) {
	l.secMu.Lock()
	defer l.secMu.Unlock()
	for _, b := range l.secrets {
		clear(b)
	}
	l.secrets = nil
	if secrets == nil {
		for _, b := range l.tokens {
			clear(b)
		}
		l.tokens = nil
	}
	for _, s := range secrets {
		l.secrets = append(l.secrets, slices.Clone(s.Bytes()))
		if _, tok, ok := strings.Cut(string(s.Bytes()), " "); ok && l.view.Transport == vault.TransportHTTP && len(tok) >= 4 {
			l.secrets = append(l.secrets, []byte(tok))
		}
	}
}

// redact removes every form of the server's secrets from b. Once the
// server is stopping its secrets may already be wiped, so nothing can be
// cleaned of them: ok is false and b must not be passed on. (stop cancels
// l.ctx before it takes secMu to wipe.)
func (l *live) redact(b []byte) (_ []byte, ok bool) {
	l.secMu.RLock()
	defer l.secMu.RUnlock()
	if l.ctx.Err() != nil {
		return nil, false
	}
	if len(l.tokens) == 0 {
		return action.Redact(b, l.secrets...), true
	}
	return action.Redact(b, append(slices.Clone(l.secrets), l.tokens...)...), true
}

// redactText removes the server's secrets from a string it sent.
func (l *live) redactText(s string) string {
	if s == "" {
		return s
	}
	r, ok := l.redact([]byte(s))
	if !ok {
		return "[withheld: the server is stopping]"
	}
	return string(r)
}

// redactJSON removes the server's secrets from a JSON value it sent; a
// value that no longer parses after redaction is dropped.
func (l *live) redactJSON(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	r, ok := l.redact(b)
	if !ok {
		return nil
	}
	if len(r) == len(b) && string(r) == string(b) {
		return v
	}
	var out any
	if json.Unmarshal(r, &out) != nil {
		return nil
	}
	return out
}

// Call calls the tool with the agent's arguments. ctx carries the
// pipeline's cut: when it ends (a vault lock) the call is cancelled at the
// server and Call returns ctx's error. Errors: ErrNotReady (nothing was
// sent), ErrLost (it may have run), ErrWithheld (it ran; its answer is not
// passed on).
func (m *Manager) Call(ctx context.Context, t Tool, args json.RawMessage) (*Result, error) {
	m.mu.Lock()
	l := m.live[t.Server.ID]
	m.mu.Unlock()
	if l == nil || l.current().Version != t.Server.Version {
		return nil, ErrNotReady
	}
	l.mu.Lock()
	s, state := l.session, l.state
	l.mu.Unlock()
	if s == nil || state != StateReady {
		return nil, ErrNotReady
	}
	if !l.authorizationServes() {
		return nil, ErrNotReady
	}
	params := &mcp.CallToolParams{Name: t.Upstream}
	if len(args) > 0 && string(args) != "null" {
		params.Arguments = args
	}
	res, err := s.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code != -32003 && we.Code != -32004 && l.ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
			text := l.redactText(fmt.Sprintf("the server refused the call (JSON-RPC error %d): %s", we.Code, we.Message))
			return &Result{Result: &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, ProtocolError: true}, nil
		}
		return nil, fmt.Errorf("%w: %s", ErrLost, l.redactText(problemOf(err)))
	}
	return l.clean(res)
}

// clean redacts a result of every form of the server's secrets and cuts
// it at the cap.
func (l *live) clean(res *mcp.CallToolResult) (*Result, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, ErrWithheld
	}
	out := &Result{Bytes: len(raw)}
	red, ok := l.redact(raw)
	if !ok {
		// Stopped (a lock, an edit) while the answer came: it ran, and
		// its answer cannot be cleaned any more.
		return nil, ErrWithheld
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(red, &r); err != nil {
		return nil, ErrWithheld
	}
	sum := sha256.Sum256(red)
	out.SHA256 = hex.EncodeToString(sum[:])
	r.Meta = nil
	cap := l.m.cfg.MaxResultBytes
	if len(red) > cap {
		out.Truncated = true
		r.StructuredContent = nil
		budget := cap
		var kept []mcp.Content
		for _, c := range r.Content {
			b, _ := json.Marshal(c)
			if len(b) <= budget {
				kept = append(kept, c)
				budget -= len(b)
				continue
			}
			if tc, ok := c.(*mcp.TextContent); ok && budget > 256 {
				text := tc.Text[:min(len(tc.Text), budget-256)]
				kept = append(kept, &mcp.TextContent{Text: strings.ToValidUTF8(text, "")})
			}
			break
		}
		r.Content = kept
	}
	out.Result = &r
	return out, nil
}
