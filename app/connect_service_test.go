package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/gateway"
)

// The Connect page writes Yett into each client's own configuration: it
// shows the change first (Yett's entry only, never the file's other
// servers and their tokens), writes only the change it showed, keeps the
// file as it was, and says afterwards which clients have Yett.
func TestConnectAgentClients(t *testing.T) {
	const canary = "CANARY-github-token-of-another-server"
	home := t.TempDir()
	cli := filepath.Join(home, "apps", "yett")
	os.MkdirAll(filepath.Dir(cli), 0o700)
	os.WriteFile(cli, []byte("#!/bin/sh\n"), 0o700)
	write := func(rel, text string) string {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	claudeFile := write(".claude.json", `{"numStartups": 3, "mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "`+canary+`"}}}}`)
	cursorFile := write(".cursor/mcp.json", `{"mcpServers": {`) // broken
	write(".codex/config.toml", "[mcp_servers.yett]\ncommand = \"/old/yett\"\nargs = [\"mcp\"]\n")
	s := newConnectService(cli, nil)
	s.getenv = func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	// What the gateway noted of the clients that called (ClientsFile),
	// newest first; a name agentconfig does not know stays off the page.
	called := time.Date(2026, 12, 3, 9, 41, 0, 0, time.UTC)
	s.clients = func() ([]gateway.ClientSeen, error) {
		return []gateway.ClientSeen{
			{Name: "mcp-inspector", Program: "node", PID: 9, LastCall: called.Add(time.Hour)},
			{Name: "claude-code", Version: "2.1.328", Program: "claude", PID: 4242, LastCall: called},
			{Name: "claude-code-old", Program: "claude", PID: 1, LastCall: called.Add(-time.Hour)},
		}, nil
	}
	var shown strings.Builder // every answer the window gets, as JSON
	see := func(v any) {
		b, _ := json.Marshal(v)
		shown.Write(b)
	}
	states := func() map[string]AgentClient {
		list := s.AgentClients()
		see(list)
		m := map[string]AgentClient{}
		for _, c := range list {
			m[c.ID] = c
		}
		return m
	}
	st := states()
	for id, want := range map[string]string{"claude": "absent", "codex": "different", "cursor": "unreadable", "vscode": "absent"} {
		if st[id].State != want {
			t.Errorf("%s: %+v, want %s", id, st[id], want)
		}
	}
	if c := st["claude"]; c.LastCall != "2026-12-03T09:41:00Z" || c.LastProgram != "claude" || c.LastPID != 4242 || st["codex"].LastCall != "" {
		t.Errorf("last calls: %+v", st)
	}
	if st["claude"].Path != "~/.claude.json" || st["vscode"].Path != "~/.config/Code/User/mcp.json" || st["cursor"].Problem == "" {
		t.Errorf("paths and problems: %+v", st)
	}

	plan, err := s.PlanAgent("claude", false)
	see(plan)
	if err != nil || plan.Change != "add" || plan.Creates || !strings.Contains(plan.Entry, `"command": "`+cli+`"`) || plan.Plan == "" {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	// A change other than the one shown is not written: a made-up name,
	// and the file changed after it was shown.
	if _, err := s.ApplyAgent("claude", false, strings.Repeat("0", len(plan.Plan))); err == nil {
		t.Fatal("a change nobody was shown was written")
	}
	before, _ := os.ReadFile(claudeFile)
	os.WriteFile(claudeFile, append(before[:len(before)-1:len(before)-1], []byte(`, "tipsShown": 1}`)...), 0o600)
	if _, err := s.ApplyAgent("claude", false, plan.Plan); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("applied over a file changed since it was shown: %v", err)
	}
	plan, _ = s.PlanAgent("claude", false)
	done, err := s.ApplyAgent("claude", false, plan.Plan)
	see(done)
	if err != nil || done.Path != "~/.claude.json" || done.Backup != "~/.claude.json.yett-backup" || !strings.Contains(done.Message, "Restart Claude Code") {
		t.Fatalf("apply: %+v, %v", done, err)
	}
	after, _ := os.ReadFile(claudeFile)
	if !strings.Contains(string(after), canary) || !strings.Contains(string(after), `"tipsShown": 1`) {
		t.Fatalf("the other server or setting is gone:\n%s", after)
	}
	if st := states(); st["claude"].State != "connected" {
		t.Fatalf("after adding: %+v", st["claude"])
	}
	if again, _ := s.PlanAgent("claude", false); again.Change != "none" {
		t.Fatalf("a second add plans %q", again.Change)
	}

	// A different entry is updated; a new file is created.
	for _, id := range []string{"codex", "vscode"} {
		p, err := s.PlanAgent(id, false)
		if err != nil || p.Change != map[string]string{"codex": "update", "vscode": "add"}[id] || p.Creates != (id == "vscode") {
			t.Fatalf("%s: %+v, %v", id, p, err)
		}
		if _, err := s.ApplyAgent(id, false, p.Plan); err != nil {
			t.Fatal(err)
		}
	}
	// The broken file is never written.
	if _, err := s.PlanAgent("cursor", false); err == nil {
		t.Fatal("planned a change to a file that does not parse")
	}
	if b, _ := os.ReadFile(cursorFile); string(b) != `{"mcpServers": {` {
		t.Fatalf("the broken file changed: %q", b)
	}

	// Taking Yett out.
	rm, err := s.PlanAgent("claude", true)
	if err != nil || rm.Change != "remove" || rm.Entry != "" {
		t.Fatalf("remove plan %+v, %v", rm, err)
	}
	if _, err := s.ApplyAgent("claude", true, rm.Plan); err != nil {
		t.Fatal(err)
	}
	st = states()
	if st["claude"].State != "absent" || st["codex"].State != "connected" || st["vscode"].State != "connected" {
		t.Fatalf("after: %+v", st)
	}
	if b, _ := os.ReadFile(claudeFile); !strings.Contains(string(b), canary) {
		t.Fatal("removing Yett took the other server")
	}
	if _, err := s.PlanAgent("emacs", false); err == nil {
		t.Fatal("planned a change for a client Yett does not know")
	}
	// Without the CLI there is nothing to write, but the state is read.
	gone := newConnectService("yett", nil)
	gone.getenv = s.getenv
	if st := gone.AgentClients(); st[1].ID != "codex" || st[1].State != "different" {
		t.Fatalf("without the CLI: %+v", st)
	}
	if strings.Contains(shown.String(), canary) {
		t.Fatal("another server's token reached the window")
	}
}
