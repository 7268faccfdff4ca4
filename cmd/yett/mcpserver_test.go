//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
	"github.com/yettdev/yett/internal/testsupport/nonroot"
)

// The terminal path of an upstream MCP server, as a person runs it: define
// the real server-everything from npm with a secret in its environment,
// show it (no secret), serve, and a real agent through the real yett mcp
// calls its get-env tool on the run's approval; the secret comes back
// redacted, and the server is removed.
func TestMCPServerCommands(t *testing.T) { mcpServerCommands(t, nil) }

// TestMCPServerCommandsNonRoot: the same for a throwaway person who is not
// root, with their own home, yett and agent (the server Yett starts is
// theirs too).
func TestMCPServerCommandsNonRoot(t *testing.T) { mcpServerCommands(t, nonroot.Person(t)) }

func mcpServerCommands(t *testing.T, as *nonroot.User) {
	node, args := mcpservertest.Everything(t)
	script := args[0]
	home, yett := "", yettBin
	if as == nil {
		home = newHome(t)
	} else {
		home = as.Home
		yett = as.Install(t, yettBin, "yett")
	}
	env := append(homeEnv(home), "PATH="+filepath.Dir(yett)+":"+filepath.Dir(node)+":"+os.Getenv("PATH"), "PS1=$ ")
	sh := startPTYAs(t, as, env, "bash", "--norc", "--noprofile", "-i")
	sh.answer(t, "$ ", "yett init")
	sh.answer(t, "New passphrase: ", setupPassphrase)
	sh.answer(t, "The same passphrase again: ", setupPassphrase)
	sh.expect(t, "Vault created in ")
	// Refused before any passphrase: a bad name, secrets over plain HTTP.
	sh.answer(t, "$ ", "yett mcp-server add --name Bad --command node; echo exit=$?")
	sh.expect(t, "exit=2")
	sh.answer(t, "$ ", "yett mcp-server add --name remote --url http://mcp.example.com/mcp --secret-header Authorization; echo exit=$?")
	sh.expect(t, "secrets travel only over https, except to loopback")
	sh.answer(t, "$ ", "yett mcp-server add --name everything --command "+filepath.Base(node)+" --arg "+script+" --arg stdio --env EVERYTHING_MODE=test "+
		"--secret-env API_TOKEN --tool toggle-simulated-logging=per-call --owner alice --backup-revoker bob --environment staging")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.answer(t, `Value of API_TOKEN for "everything" (not shown as you type): `, setupCanary)
	sh.expect(t, `Added MCP server "everything"`)
	sh.answer(t, "$ ", "yett mcp-server show everything")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.expect(t, "API_TOKEN (stored; write-only, never shown)")
	sh.expect(t, "toggle-simulated-logging=per-call")
	sh.expect(t, "under control (staging)")
	// A tool's mode, changed later: get-env (which says it only reads)
	// asks every call, and toggle-simulated-logging gets the server's mode.
	sh.answer(t, "$ ", "yett mcp-server set everything --tool get-env=per-call --tool toggle-simulated-logging=default")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.expect(t, `Saved MCP server "everything"`)
	sh.expect(t, "tools           get-env=per-call")
	sh.answer(t, "$ ", "yett serve --approval-timeout 30s")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.expect(t, "gateway listening")
	r := runAgent(t, as, env, yett, map[string]any{"_tool": "everything.get-env"}, func() { sh.approveCard(t, 1); sh.approveCard(t, 2) })
	if r.err != nil || !strings.Contains(r.text, `"API_TOKEN": "[REDACTED]"`) || !strings.Contains(r.text, `"EVERYTHING_MODE": "test"`) {
		t.Fatalf("the agent's call: %+v; the terminal shows:\n%s", r, sh.screen.String())
	}
	if !strings.Contains(sh.screen.String(), "wants:   to call the tool everything.get-env of the MCP server everything, with these arguments, sent exactly as shown:\r\n             {}") {
		t.Fatalf("the per-call card at the terminal:\n%s", sh.screen.String())
	}
	sh.answer(t, "[2] approved.", "quit")
	sh.expect(t, "yett serve: stopped")
	sh.answer(t, "$ ", "yett mcp-server remove everything")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.answer(t, "Agents lose its tools at once, and Yett stops it.", "y")
	sh.expect(t, `Removed MCP server "everything"`)
	sh.answer(t, "$ ", "exit")
	if code := sh.wait(t); code != 0 {
		t.Errorf("the shell exited %d", code)
	}
	for name, out := range map[string]string{"the terminal": sh.screen.String(), "the agent's answer": r.text} {
		if strings.Contains(out, setupCanary) {
			t.Errorf("the secret is in %s", name)
		}
	}
	// Both changes are in the audit log, at the terminal, without the
	// secret.
	var changes []string
	for _, e := range auditEntries(t, home) {
		if c := e.Event.VaultChange; e.Event.Type == audit.EventVaultChanged && c != nil {
			changes = append(changes, fmt.Sprintf("%s %s %s", c.Change, c.Name, e.Event.Surface))
		}
	}
	if want := "mcp_server_added everything terminal,mcp_server_edited everything terminal,mcp_server_removed everything terminal"; strings.Join(changes, ",") != want {
		t.Fatalf("vault changes %q, want %q", changes, want)
	}
}
