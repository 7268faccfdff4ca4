// Package mcpservertest finds the real MCP servers from npm that tests
// start (build/agents, installed by build/scripts/deps.sh test): the
// command a person would give Yett for them.
package mcpservertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Everything is @modelcontextprotocol/server-everything over stdio: node,
// its script, "stdio". It fails the test when node or the server is
// missing: tests are never skipped for a missing part.
func Everything(t testing.TB) (command string, args []string) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "..", "build", "agents", "node_modules", "@modelcontextprotocol",
		"server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything is not installed: run build/scripts/deps.sh test (%v)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	return node, []string{script, "stdio"}
}
