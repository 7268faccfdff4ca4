package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/yettdev/yett/backend/agentconfig"
	"github.com/yettdev/yett/backend/approval"
)

func init() {
	commands["connect-agent"] = command{
		usage:   connectAgentUsage,
		summary: "add Yett to Claude Code, Codex, Cursor or VS Code (or take it out)",
		run:     runConnectAgent,
	}
}

const connectAgentUsage = `usage: yett connect-agent claude|codex|cursor|vscode [--project DIR] [--remove] [--yes]

Writes Yett into the agent client's own MCP configuration, so the client
starts this yett's "yett mcp": Claude Code's ~/.claude.json, Codex's
~/.codex/config.toml (with a tool timeout longer than an approval card
waits), Cursor's ~/.cursor/mcp.json, VS Code's mcp.json in your settings
folder; with --project, the project's .mcp.json, .codex/config.toml,
.cursor/mcp.json or .vscode/mcp.json instead. --remove takes Yett out.

It shows the change first and asks before writing (--yes writes without
asking; without a terminal it only shows the change unless --yes). Only
Yett's entry changes: other servers, settings and comments stay as they
are, and a file it cannot read safely is left alone. The file as it was is
kept beside it (name + .yett-backup). Running it again changes nothing.
Restart the client (or reload its MCP servers) afterwards.
`

func runConnectAgent(_ context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("connect-agent", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, connectAgentUsage) }
	project := fs.String("project", "", "a project directory: its configuration, not yours")
	remove := fs.Bool("remove", false, "take Yett out")
	yes := fs.Bool("yes", false, "write without asking")
	// The client comes first; flags may follow it.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = append(args[1:], args[0])
	}
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return withExitCode(2, errors.New("connect-agent: name one client: claude, codex, cursor or vscode"))
	}
	cmd, err := os.Executable()
	if err == nil {
		cmd, err = filepath.EvalSymlinks(cmd)
	}
	if err != nil {
		return fmt.Errorf("connect-agent: where this yett is: %w", err)
	}
	home, configDir := agentconfig.Locate(env.Getenv)
	p, err := agentconfig.Make(agentconfig.Options{
		Client: fs.Arg(0), Command: cmd, Home: home, ConfigDir: configDir, Project: *project, Remove: *remove,
		ToolTimeout: int(approval.DefaultTimeout.Seconds()) + 60,
	})
	if err != nil {
		return fmt.Errorf("connect-agent: %w", err)
	}
	if p.Change == "none" {
		if *remove {
			fmt.Fprintf(env.Stdout, "Yett is not in %s: nothing to change.\n", p.Path)
		} else {
			fmt.Fprintf(env.Stdout, "Yett is already in %s, as it should be: nothing to change.\n", p.Path)
		}
		return nil
	}
	what := map[string]string{"add": "add Yett to", "update": "update Yett's entry in", "remove": "take Yett out of"}[p.Change]
	if !p.Exists {
		what = "create"
	}
	fmt.Fprintf(env.Stdout, "This will %s %s:\n\n%s\n", what, p.Path, p.Diff())
	if !*yes {
		if f, ok := env.Stdin.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
			return withExitCode(1, errors.New("connect-agent: nothing written; run it at a terminal to confirm, or with --yes"))
		}
		fmt.Fprint(env.Stdout, "Write it? [y/N] ")
		line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(env.Stdout, "Nothing written.")
			return nil
		}
	}
	backup, err := p.Apply()
	if err != nil {
		return fmt.Errorf("connect-agent: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Written %s.", p.Path)
	if backup != "" {
		fmt.Fprintf(env.Stdout, " The file as it was is %s.", backup)
	}
	fmt.Fprintln(env.Stdout, " Restart the client (or reload its MCP servers) to use it.")
	return nil
}
