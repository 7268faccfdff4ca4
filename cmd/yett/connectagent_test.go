package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// yett connect-agent writes each client's file in a throwaway HOME with the
// path of the yett that ran it, keeps what was there and a backup, changes
// nothing the second time, writes nothing without a terminal or --yes, and
// takes Yett out with --remove.
func TestConnectAgentCommand(t *testing.T) {
	home := t.TempDir()
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(yettBin, append([]string{"connect-agent"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	bin, _ := filepath.EvalSymlinks(yettBin)
	codex := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(codex), 0o700)
	os.WriteFile(codex, []byte("# mine\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n"), 0o600)

	// Without a terminal and without --yes, only the plan.
	out, code := run("codex")
	if code == 0 || !strings.Contains(out, "+ [mcp_servers.yett]") || !strings.Contains(out, "nothing written") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if b, _ := os.ReadFile(codex); strings.Contains(string(b), "yett") {
		t.Fatal("written without a confirmation")
	}
	out, code = run("codex", "--yes")
	if code != 0 || !strings.Contains(out, "Written "+codex) || !strings.Contains(out, codex+".yett-backup") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var doc map[string]map[string]map[string]any
	b, _ := os.ReadFile(codex)
	if _, err := toml.Decode(string(b), &doc); err != nil || doc["mcp_servers"]["yett"]["command"] != bin || doc["mcp_servers"]["docs"] == nil ||
		!strings.HasPrefix(string(b), "# mine\n") {
		t.Fatalf("config.toml:\n%s (%v)", b, err)
	}
	if out, code = run("codex", "--yes"); code != 0 || !strings.Contains(out, "already in") {
		t.Fatalf("again: exit %d:\n%s", code, out)
	}
	for _, client := range []string{"claude", "cursor", "vscode"} {
		if out, code := run(client, "--yes"); code != 0 {
			t.Fatalf("%s: exit %d:\n%s", client, code, out)
		}
	}
	for file, servers := range map[string]string{".claude.json": "mcpServers", ".cursor/mcp.json": "mcpServers", ".config/Code/User/mcp.json": "servers"} {
		var m map[string]map[string]map[string]any
		b, err := os.ReadFile(filepath.Join(home, file))
		if err != nil || json.Unmarshal(b, &m) != nil || m[servers]["yett"]["command"] != bin {
			t.Fatalf("%s:\n%s (%v)", file, b, err)
		}
	}
	proj := t.TempDir()
	if out, code := run("cursor", "--project", proj, "--yes"); code != 0 || !strings.Contains(out, filepath.Join(proj, ".cursor", "mcp.json")) {
		t.Fatalf("project: exit %d:\n%s", code, out)
	}
	if out, code := run("codex", "--remove", "--yes"); code != 0 || !strings.Contains(out, "take Yett out") {
		t.Fatalf("remove: exit %d:\n%s", code, out)
	}
	if b, _ := os.ReadFile(codex); strings.Contains(string(b), "yett") || !strings.Contains(string(b), "[mcp_servers.docs]") {
		t.Fatalf("after remove:\n%s", b)
	}
	if _, code := run("zed", "--yes"); code == 0 {
		t.Fatal("an unknown client exited 0")
	}
}
