package upstream

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

const canary = "CANARY-upstream-windows-2c7e"

// cmdExe is the system's command interpreter, as a person would name it.
func cmdExe(t *testing.T) string {
	t.Helper()
	exe := os.Getenv("ComSpec")
	if exe == "" {
		exe = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	}
	if !filepath.IsAbs(exe) {
		t.Fatalf("no absolute path to cmd.exe (%q)", exe)
	}
	return exe
}

// TestStdioServerEnvironmentOnWindows: a server Yett starts on Windows
// gets the Windows basics of Yett's environment, its values and its
// secrets, and nothing else of Yett's environment.
func TestStdioServerEnvironmentOnWindows(t *testing.T) {
	t.Setenv("YETT_PARENT_ONLY", "the server must not see this")
	view := vault.MCPServerView{Name: "env", Transport: vault.TransportStdio, Command: cmdExe(t), Args: []string{"/c", "set"},
		Env: map[string]string{"EVERYTHING_MODE": "test"}}
	sec := vault.NewSecret([]byte(canary))
	p, err := startProcess(view, map[string]*vault.Secret{"API_TOKEN": &sec}, DefaultBaseEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	var lines []string
	sc := bufio.NewScanner(p.stdout)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	env := strings.Join(lines, "\n")
	if !strings.Contains(env, "API_TOKEN="+canary) || !strings.Contains(env, "EVERYTHING_MODE=test") || strings.Contains(env, "YETT_PARENT_ONLY") {
		t.Fatalf("the server's environment:\n%s", env)
	}
}

// TestStdioServerStopsOnWindows: stopping a server that runs ends it.
func TestStdioServerStopsOnWindows(t *testing.T) {
	view := vault.MCPServerView{Name: "wait", Transport: vault.TransportStdio, Command: cmdExe(t), Args: []string{"/k"}}
	p, err := startProcess(view, nil, DefaultBaseEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop")
	}
	select {
	case <-p.done:
	default:
		t.Fatal("stop returned before the server ended")
	}
}
