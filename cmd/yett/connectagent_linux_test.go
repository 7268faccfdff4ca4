//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// At a terminal, yett connect-agent shows the change and writes it only
// when the person says yes.
func TestConnectAgentAsksAtTheTerminal(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}
	path := filepath.Join(home, ".cursor", "mcp.json")
	no := startPTY(t, env, yettBin, "connect-agent", "cursor")
	no.expect(t, "This will create "+path)
	no.answer(t, "Write it? [y/N] ", "n")
	no.expect(t, "Nothing written.")
	if code := no.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("written after no")
	}
	yes := startPTY(t, env, yettBin, "connect-agent", "cursor")
	yes.answer(t, "Write it? [y/N] ", "y")
	yes.expect(t, "Written "+path)
	if code := yes.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"yett"`) {
		t.Fatalf("%s", b)
	}
}
