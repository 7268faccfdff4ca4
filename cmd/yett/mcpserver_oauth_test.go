//go:build linux

package main

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
)

// A remote MCP server behind real Ory Hydra, connected at the terminal as
// a person does: yett mcp-server add --oauth discovers the server's
// authorization server, registers Yett there, prints the consent address;
// the browser consents; the account is under custody (yett accounts) and
// the server's record names it; yett serve serves its tools to an agent
// through the real yett mcp, with the card at its terminal, and the token
// the server echoes comes back redacted.
func TestMCPServerOAuthAtTerminal(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{DynamicRegistration: true})
	tr := mcpservertest.StartTracker(t, h.Issuer, h.AdminURL+"/admin/oauth2/introspect")
	home := newHome(t)
	env := homeEnv(home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runSetup(t, env, func(r *ptyRun) { r.expect(t, "Vault created") }, "init")

	// Refused before any passphrase: --oauth without an environment, or
	// for a local server.
	for _, args := range [][]string{
		{"mcp-server", "add", "--name", "tracker", "--url", tr.URL + "/mcp", "--oauth"},
		{"mcp-server", "add", "--name", "tracker", "--command", "/bin/true", "--oauth", "--environment", "development"},
		{"mcp-server", "add", "--name", "tracker", "--url", tr.URL + "/mcp", "--scope", "openid"},
	} {
		r := startPTY(t, env, yettBin, args...)
		if code := r.wait(t); code != 2 || strings.Contains(r.screen.String(), "passphrase") {
			t.Fatalf("yett %s: exit %d, terminal:\n%s", strings.Join(args, " "), code, r.screen.String())
		}
	}

	runSetup(t, env, func(r *ptyRun) {
		r.expect(t, "Tracker is authorized by "+h.Issuer+"; its tokens are asked for the resource "+tr.URL+"/mcp with the scopes openid.")
		r.expect(t, "Yett registered itself there as a client")
		authURL := r.capture(t, regexp.MustCompile(`consent:\s+(http\S+)`))
		if !strings.Contains(authURL, "resource=") || !strings.Contains(authURL, "code_challenge_method=S256") {
			t.Errorf("the printed address %q lacks the resource or PKCE", authURL)
		}
		if status, _, err := h.Browse(ctx, authURL); err != nil || status != 200 {
			t.Fatalf("the browser: %d %v", status, err)
		}
		r.expect(t, `Added MCP server "tracker"`)
	}, "mcp-server", "add", "--name", "tracker", "--url", tr.URL+"/mcp", "--oauth", "--environment", "development",
		"--approval", "session", "--owner", "alice", "--backup-revoker", "bob")
	runSetup(t, env, func(r *ptyRun) {
		r.capture(t, regexp.MustCompile(`oauth\s+(az-\S+) \(an account under OAuth custody`))
		r.expect(t, "under control (development)")
	}, "mcp-server", "show", "tracker")
	runSetup(t, env, func(r *ptyRun) {
		r.capture(t, regexp.MustCompile(`(MCP server tracker)\s+127\.0\.0\.1:\d+\s+alice@example\.test\s+development\s+active\s+alice\s+bob`))
	}, "accounts")

	serve := startPTY(t, env, yettBin, "serve", "--approval-timeout", "60s")
	serve.answer(t, "Yett vault passphrase: ", setupPassphrase)
	serve.expect(t, "gateway listening")
	shim := exec.Command(yettBin, "mcp")
	shim.Env = env
	s, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-upstream-agent", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: shim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tool := range tools.Tools {
			found = found || tool.Name == "tracker.whoami"
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never saw tracker.whoami; yett serve shows:\n%s", serve.screen.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	done := make(chan string, 1)
	go func() {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "tracker.whoami", Arguments: map[string]any{}})
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- callText(res)
	}()
	serve.approveCard(t, 1)
	var text string
	select {
	case text = <-done:
	case <-ctx.Done():
		t.Fatalf("no answer; the terminal shows:\n%s", serve.screen.String())
	}
	if !strings.Contains(text, "You came with Bearer [REDACTED]") {
		t.Fatalf("whoami through yett serve: %s", text)
	}
	for tok := range tr.Tokens() {
		if strings.Contains(text, tok) || strings.Contains(serve.screen.String(), tok) {
			t.Fatal("the access token reached the agent or the terminal")
		}
	}
	serve.answer(t, "[1] approved.", "quit")
	serve.expect(t, "yett serve: stopped")
	if code := serve.wait(t); code != 0 {
		t.Fatalf("yett serve exited %d", code)
	}
}
