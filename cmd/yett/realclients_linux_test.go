//go:build linux

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentconfig"
	"github.com/yettdev/yett/backend/rpcframe"
)

// nameOf is the name in names that agentconfig takes for client.
func nameOf(names map[string]bool, client string) string {
	for n := range names {
		if agentconfig.ClientOf(n) == client {
			return n
		}
	}
	return ""
}

// agentsBin is a command the test agents' npm project installs
// (build/scripts/deps.sh test).
func agentsBin(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "build", "agents", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed: run build/scripts/deps.sh test (%v)", name, err)
	}
	return p
}

// offline runs a client in a network namespace with only loopback down:
// the real CLIs reach nothing but the shim they start.
func offline(name string, args ...string) *exec.Cmd {
	flag := "-n"
	if os.Geteuid() != 0 {
		flag = "-rn"
	}
	return exec.Command("unshare", append([]string{flag, name}, args...)...)
}

// The real Claude Code and Codex CLIs read what yett connect-agent wrote
// into a throwaway HOME and start yett mcp from it: Claude Code's
// `claude mcp list` initializes it through the shim (after its
// server/discover probe) and prints it connected; Codex's `codex mcp list`
// shows the entry with its timeouts; `codex exec` gets through initialize
// and tools/list, with the filtered environment it gives servers. Another
// server already in each file stays. Behind the socket is a go-sdk server
// standing in for the gateway.
func TestRealClientsUseConnectAgent(t *testing.T) {
	claude, codex := agentsBin(t, "claude"), agentsBin(t, "codex")
	home := t.TempDir()
	// The gateway listens where yett serve would with this HOME and no
	// $XDG_RUNTIME_DIR: Codex gives a server only HOME, PATH and a few
	// more, so the shim must find it without any variable of its own.
	dir := filepath.Join(home, ".local", "share", "yett", "run")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, gatewaySocketName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var methods []string
	clientNames := map[string]bool{} // as each client names itself
	server := mcp.NewServer(&mcp.Implementation{Name: "stub-gateway", Version: "0"}, nil)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			methods = append(methods, method)
			if r, ok := req.(interface{ ClientInfo() *mcp.Implementation }); ok && method == "tools/list" && r.ClientInfo() != nil {
				clientNames[r.ClientInfo().Name] = true
			}
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(server, &mcp.Tool{Name: "yett.status", Description: "status"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for {
			conn, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			go func() {
				if ss, err := server.Connect(ctx, &rpcframe.Transport{Conn: conn}, nil); err == nil {
					ss.Wait()
				}
			}()
		}
	}()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=dumb", "LANG=C.UTF-8"}
	// runUntil runs a client to its end, or ends it and all it started
	// once until says so (polled), or after 60 s.
	runUntil := func(cmd *exec.Cmd, until func() bool) string {
		t.Helper()
		cmd.Env, cmd.Dir = env, home
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.WaitDelay = 5 * time.Second
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			deadline := time.After(60 * time.Second)
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-deadline:
				case <-tick.C:
					if until == nil || !until() {
						continue
					}
				}
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				return
			}
		}()
		cmd.Wait()
		close(done)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
		return out.String()
	}
	run := func(cmd *exec.Cmd) string { return runUntil(cmd, nil) }
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"numStartups": 1, "mcpServers": {"docs": {"type": "stdio", "command": "/bin/false", "args": []}}}`), 0o600)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("[mcp_servers.docs]\ncommand = \"/bin/false\"\n"), 0o600)
	for _, client := range []string{"claude", "codex"} {
		if out := run(exec.Command(yettBin, "connect-agent", client, "--yes")); !strings.Contains(out, "Written") {
			t.Fatalf("connect-agent %s:\n%s", client, out)
		}
	}

	out := run(offline(claude, "mcp", "list"))
	if !strings.Contains(out, "yett: "+yettBin+" mcp - ✔ Connected") || !strings.Contains(out, "docs:") {
		t.Fatalf("claude mcp list:\n%s", out)
	}
	mu.Lock()
	seen := strings.Join(methods, " ")
	mu.Unlock()
	// Claude Code 2.1 probes with server/discover (protocol 2026-07-28),
	// then lists the tools.
	if !strings.Contains(seen, "server/discover") || !strings.Contains(seen, "tools/list") {
		t.Fatalf("Claude Code's check reached the gateway with %q", seen)
	}

	// The Connect page says when each client last called from the name it
	// gives itself: the real one is the name agentconfig knows.
	mu.Lock()
	names := clientNames
	clientNames = map[string]bool{}
	mu.Unlock()
	if len(names) != 1 || !names[nameOf(names, "claude")] {
		t.Fatalf("Claude Code named itself %v", names)
	}

	out = run(offline(codex, "mcp", "list", "--json"))
	for _, want := range []string{`"name": "yett"`, `"command": "` + yettBin + `"`, `"tool_timeout_sec": 180.0`, `"startup_timeout_sec": 20.0`, `"name": "docs"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("codex mcp list --json lacks %s:\n%s", want, out)
		}
	}
	mu.Lock()
	methods = nil
	mu.Unlock()
	// codex exec starts its servers, then retries the network it does not
	// have: it is ended once it listed the tools.
	runUntil(offline(codex, "exec", "--skip-git-repo-check", "say hello"), func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(methods, " "), "tools/list")
	})
	mu.Lock()
	seen = strings.Join(methods, " ")
	mu.Unlock()
	if !strings.Contains(seen, "initialize") || !strings.Contains(seen, "tools/list") {
		t.Fatalf("codex exec reached the gateway with %q", seen)
	}
	mu.Lock()
	names = clientNames
	mu.Unlock()
	if len(names) != 1 || !names[nameOf(names, "codex")] {
		t.Fatalf("Codex named itself %v", names)
	}

	// --remove takes Yett out of both and leaves the other server.
	for _, client := range []string{"claude", "codex"} {
		run(exec.Command(yettBin, "connect-agent", client, "--remove", "--yes"))
	}
	if out := run(offline(claude, "mcp", "list")); strings.Contains(out, "yett:") || !strings.Contains(out, "docs:") {
		t.Fatalf("claude mcp list after remove:\n%s", out)
	}
	if out := run(offline(codex, "mcp", "list", "--json")); strings.Contains(out, `"name": "yett"`) || !strings.Contains(out, `"name": "docs"`) {
		t.Fatalf("codex mcp list after remove:\n%s", out)
	}
}
