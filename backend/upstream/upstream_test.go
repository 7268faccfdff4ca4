//go:build unix

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
)

const (
	passphrase = "correct horse battery staple upstream"
	canary     = "CANARY-upstream-5d1e9a7c-never-leak"
)

// everything is the real @modelcontextprotocol/server-everything from
// npm, as a person would define it.
func everything(t testing.TB) (command string, args []string) { return mcpservertest.Everything(t) }

func newVault(t testing.TB) *vault.Vault {
	t.Helper()
	v, err := vault.Open(filepath.Join(t.TempDir(), "vault"), vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	if err := v.Create(vault.Passphrase(passphrase), false); err != nil {
		t.Fatal(err)
	}
	return v
}

func newManager(t testing.TB, v *vault.Vault, cfg Config) *Manager {
	t.Helper()
	cfg.Vault = v
	if cfg.Dial == nil {
		cfg.Dial = action.New(action.Config{}).GuardedDial
	}
	m := New(cfg)
	m.Start()
	t.Cleanup(m.Close)
	return m
}

func addEverything(t testing.TB, v *vault.Vault, settings vault.MCPServerSettings) vault.MCPServerView {
	t.Helper()
	cmd, args := everything(t)
	s, err := v.MCPServers().Add(vault.NewMCPServer{
		Name: "everything", Transport: vault.TransportStdio, Command: cmd, Args: args,
		Env:               map[string]string{"EVERYTHING_MODE": "test"},
		Secrets:           map[string]vault.Secret{"API_TOKEN": vault.NewSecret([]byte(canary))},
		MCPServerSettings: settings,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitTool waits until the manager lists the tool.
func waitTool(t testing.TB, m *Manager, name string) Tool {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if tool, ok := m.Lookup(name); ok {
			return tool
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never listed; statuses %+v", name, m.Statuses())
	return Tool{}
}

func text(r *Result) string {
	var b strings.Builder
	for _, c := range r.Result.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStdioServerEverything(t *testing.T) {
	t.Setenv("YETT_PARENT_ONLY", "the server must not see this")
	v := newVault(t)
	m := newManager(t, v, Config{})
	var changes atomic.Int32
	m.Subscribe(func() { changes.Add(1) })
	s := addEverything(t, v, vault.MCPServerSettings{Tools: map[string]vault.Approval{"get-env": vault.ApprovalPerCall}})

	echo := waitTool(t, m, "everything.echo")
	if echo.Upstream != "echo" || echo.Server.ID != s.ID || echo.Listed.Name != "everything.echo" || !strings.Contains(echo.Listed.Description, `"everything"`) {
		t.Fatalf("echo as listed: %+v %+v", echo, echo.Listed)
	}
	getEnv := waitTool(t, m, "everything.get-env")
	// The server says get-env only reads; the person said every call asks.
	if !getEnv.ReadOnly || getEnv.Approval() != vault.ApprovalPerCall || !getEnv.AsksEachCall() {
		t.Fatalf("get-env: readOnly %v approval %v asks %v", getEnv.ReadOnly, getEnv.Approval(), getEnv.AsksEachCall())
	}
	if !echo.ReadOnly || echo.AsksEachCall() {
		t.Fatalf("echo says it only reads: it passes within a session under 'writes'")
	}
	if toggle := waitTool(t, m, "everything.toggle-simulated-logging"); toggle.ReadOnly || !toggle.AsksEachCall() {
		t.Fatalf("toggle-simulated-logging does not say it only reads: every call asks under 'writes'")
	}
	// The conditional tools the server registers after initialization
	// (it sees Yett's roots capability) arrive through its
	// notifications/tools/list_changed.
	waitTool(t, m, "everything.get-roots-list")
	if changes.Load() == 0 {
		t.Fatal("no change was published")
	}

	ctx := context.Background()
	r, err := m.Call(ctx, echo, json.RawMessage(`{"message":"hello from the agent"}`))
	if err != nil || r.Result.IsError || !strings.Contains(text(r), "hello from the agent") {
		t.Fatalf("echo: %+v %v", r, err)
	}
	r, err = m.Call(ctx, getEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := text(r)
	if strings.Contains(env, canary) || !strings.Contains(env, `"API_TOKEN": "`+action.Redacted+`"`) {
		t.Fatalf("get-env not redacted:\n%s", env)
	}
	if !strings.Contains(env, `"EVERYTHING_MODE": "test"`) || strings.Contains(env, "YETT_PARENT_ONLY") || !strings.Contains(env, `"PATH"`) {
		t.Fatalf("the server's environment is not the base, its values and its secrets:\n%s", env)
	}
	st := m.Statuses()
	if len(st) != 1 || st[0].State != StateReady || st[0].PID == 0 {
		t.Fatalf("status: %+v", st)
	}
	// The secret is in the server's own environment (the threat model's
	// limit), and nowhere in what the status says.
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(st[0].PID) + "/environ")
	if err == nil && !strings.Contains(string(environ), "API_TOKEN="+canary) {
		t.Fatalf("the server's environment lacks its secret")
	}
	if b, _ := json.Marshal(st); strings.Contains(string(b), canary) {
		t.Fatal("canary in the status")
	}

	// A lock stops the server at once; calls are refused, nothing sent.
	pid := st[0].PID
	if err := v.Lock("test"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if len(m.Tools()) != 0 {
		t.Fatalf("tools listed while locked: %d", len(m.Tools()))
	}
	if _, err := m.Call(ctx, echo, nil); !errors.Is(err, ErrNotReady) {
		t.Fatalf("call while locked: %v", err)
	}
	// Unlock starts it again; a tool listed before is stale only if the
	// server was edited.
	if err := v.Unlock(vault.Passphrase(passphrase)); err != nil {
		t.Fatal(err)
	}
	echo = waitTool(t, m, "everything.echo")
	before := m.Statuses()[0].PID
	up, err := v.MCPServers().Update(s.ID, vault.MCPServerSettings{Approval: vault.ApprovalSession})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(ctx, echo, nil); !errors.Is(err, ErrNotReady) {
		t.Fatalf("a call of the tool of an edited server: %v", err)
	}
	echo = waitTool(t, m, "everything.echo")
	deadline := time.Now().Add(10 * time.Second)
	for echo.Server.Version != up.Version && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		echo = waitTool(t, m, "everything.echo")
	}
	if echo.Server.Version != up.Version || echo.AsksEachCall() {
		t.Fatalf("after the edit: version %d approval %v", echo.Server.Version, echo.Approval())
	}
	// An edit of its settings only keeps the server running.
	if after := m.Statuses()[0].PID; after != before {
		t.Fatalf("a settings edit restarted the server: pid %d, then %d", before, after)
	}
	if r, err := m.Call(ctx, echo, json.RawMessage(`{"message":"after the edit"}`)); err != nil || !strings.Contains(text(r), "after the edit") {
		t.Fatalf("a call after a settings edit: %v", err)
	}
	pid = m.Statuses()[0].PID
	if err := v.MCPServers().Remove(s.ID); err != nil {
		t.Fatal(err)
	}
	waitNoServers(t, m)
	waitGone(t, pid)
	if _, ok := m.Lookup("everything.echo"); ok {
		t.Fatal("a removed server's tool is still listed")
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("server process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitNoServers waits until no server is listed.
func waitNoServers(t *testing.T, m *Manager) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Statuses()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still running: %+v", m.Statuses())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestUpstreamFaults(t *testing.T) {
	v := newVault(t)
	m := newManager(t, v, Config{MaxResultBytes: 2048})
	addEverything(t, v, vault.MCPServerSettings{})
	long := waitTool(t, m, "everything.trigger-long-running-operation")
	echo := waitTool(t, m, "everything.echo")
	ctx := context.Background()

	// A result over the cap is cut and flagged, still redacted.
	r, err := m.Call(ctx, echo, json.RawMessage(`{"message":"`+strings.Repeat("x", 5000)+canary+`"}`))
	if err != nil || !r.Truncated || r.Bytes <= 2048 {
		t.Fatalf("over the cap: %+v %v", r, err)
	}
	if b, _ := json.Marshal(r.Result); len(b) > 2048+512 || strings.Contains(string(b), canary) {
		t.Fatalf("cut result is %d bytes or holds the canary", len(b))
	}

	// An unknown tool is the server's refusal, not a lost call.
	bogus := long
	bogus.Upstream = "no-such-tool"
	r, err = m.Call(ctx, bogus, nil)
	if err != nil || !r.Result.IsError {
		t.Fatalf("unknown tool: %+v %v", r, err)
	}

	// The caller's cut (a lock in the gateway) ends a slow call at once.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(cctx, long, json.RawMessage(`{"duration":30,"steps":30}`))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cut call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cut call did not end")
	}

	// The server dying mid-call: the call may have run.
	pid := m.Statuses()[0].PID
	go func() {
		_, err := m.Call(ctx, long, json.RawMessage(`{"duration":30,"steps":30}`))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(pid, syscall.SIGKILL)
	select {
	case err := <-done:
		if !errors.Is(err, ErrLost) {
			t.Fatalf("server killed mid-call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call of a killed server did not end")
	}
	// It is started again.
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := m.Statuses()
		if len(st) == 1 && st[0].State == StateReady && st[0].PID != pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A lock during a slow call ends the call and the server.
	long = waitTool(t, m, "everything.trigger-long-running-operation")
	go func() {
		_, err := m.Call(ctx, long, json.RawMessage(`{"duration":30,"steps":30}`))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := v.Lock("test"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrLost) {
			t.Fatalf("locked mid-call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lock did not cut the call")
	}
}

// A remote server over Streamable HTTP, written with the Go SDK here, that
// echoes the Authorization header Yett sent it.
func TestRemoteServerHeadersRedacted(t *testing.T) {
	var seenAuth atomic.Value
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	type none struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			auth := req.Extra.Header.Get("Authorization")
			seenAuth.Store(auth)
			tok := strings.TrimPrefix(auth, "Bearer ")
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "you sent " + auth},
				&mcp.TextContent{Text: "token alone " + tok + " reversed?"},
			}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	v := newVault(t)
	m := newManager(t, v, Config{})
	if _, err := v.MCPServers().Add(vault.NewMCPServer{
		Name: "remote", Transport: vault.TransportHTTP, URL: hs.URL,
		Secrets: map[string]vault.Secret{"Authorization": vault.NewSecret([]byte("Bearer " + canary))},
	}); err != nil {
		t.Fatal(err)
	}
	who := waitTool(t, m, "remote.whoami")
	r, err := m.Call(context.Background(), who, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := seenAuth.Load().(string); got != "Bearer "+canary {
		t.Fatalf("the server saw Authorization %q", got)
	}
	if b, _ := json.Marshal(r.Result); strings.Contains(string(b), canary) || !strings.Contains(string(b), action.Redacted) {
		t.Fatalf("the token reached the result: %s", b)
	}
}

// Secrets go to a remote server only over HTTPS, except to loopback; a
// metadata address is never dialed.
func TestRemoteServerRefusals(t *testing.T) {
	v := newVault(t)
	m := newManager(t, v, Config{})
	l := m.newLive(vault.MCPServerView{Name: "x", Transport: vault.TransportHTTP, URL: "http://example.com/mcp"})
	sec := map[string]*vault.Secret{"Authorization": ptr(vault.NewSecret([]byte("Bearer " + canary)))}
	if _, err := l.httpTransport(sec); err == nil || !strings.Contains(err.Error(), "HTTPS") {
		t.Fatalf("plain HTTP with a secret: %v", err)
	}
	// A server that redirects: Yett does not follow, so the other host
	// never gets the secret header (nor any request).
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	t.Cleanup(other.Close)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirecting.Close)
	if _, err := v.MCPServers().Add(vault.NewMCPServer{Name: "redirects", Transport: vault.TransportHTTP, URL: redirecting.URL,
		Secrets: map[string]vault.Secret{"Authorization": vault.NewSecret([]byte("Bearer " + canary))}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		state, ok := m.State("redirects")
		if ok && state == StateFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a redirecting server: %q %v", state, ok)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect was followed %d times", n)
	}
	dial := action.New(action.Config{}).GuardedDial(false)
	if _, err := dial(context.Background(), "tcp", "169.254.169.254:80"); err == nil {
		t.Fatal("dialed the metadata address")
	}
	if _, err := dial(context.Background(), "tcp", "127.0.0.1:80"); err == nil {
		t.Fatal("dialed loopback without the person naming it")
	}
}

func ptr[T any](v T) *T { return &v }
