// Package agentconfig adds Yett to an agent client's own MCP configuration,
// and takes it out again: Claude Code (~/.claude.json, or a project's
// .mcp.json), Codex (~/.codex/config.toml, or a project's
// .codex/config.toml), Cursor (~/.cursor/mcp.json, or a project's
// .cursor/mcp.json) and VS Code (the user's mcp.json, or a project's
// .vscode/mcp.json).
//
// A change is planned first (Plan: the file, its text before and after)
// so a person sees it before it is written, and it touches nothing but
// Yett's own entry: every other server, setting and comment stays as it
// was, which each plan checks by reading the file before and after with a
// parser of its format and comparing all but that entry. A file that does
// not parse is never written. Applying keeps a copy of the file as it was
// (path + BackupSuffix) and replaces it in one rename. Planning the same
// change twice plans nothing the second time.
//
// JSON files are read as JSON with comments and trailing commas (VS Code
// allows them) with github.com/tailscale/hujson, which edits a document in
// place and keeps its comments and layout; TOML is read with
// github.com/BurntSushi/toml, and the entry's table is edited as text
// because no TOML encoder keeps a file's comments. Both are small,
// maintained, dependency-free libraries; a JSON or TOML reader of our own
// would be the riskier code.
package agentconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// ServerName is the name Yett's entry has in every client.
const ServerName = "yett"

// BackupSuffix names the copy of a file as it was before Apply changed it.
const BackupSuffix = ".yett-backup"

// Clients are the clients a plan can be made for.
var Clients = []string{"claude", "codex", "cursor", "vscode"}

// ErrUnreadable: the client's file is not valid in its format (or holds
// Yett's entry in a shape this package does not edit); it is left alone.
var ErrUnreadable = errors.New("agentconfig: the file cannot be edited safely")

// Options say what to plan.
type Options struct {
	// Client is one of Clients.
	Client string
	// Command is the absolute path of the yett command the client runs
	// (with the argument "mcp").
	Command string
	// Home is the user's home directory; ConfigDir the user's
	// configuration directory (os.UserConfigDir: VS Code's user mcp.json
	// lives under it).
	Home, ConfigDir string
	// Project, when set, is a project directory: the client's file for
	// that project, not the user's.
	Project string
	// Remove plans taking Yett's entry out.
	Remove bool
	// ToolTimeout is how long Codex lets a tool call run, in seconds: longer
	// than an approval card waits.
	ToolTimeout int
}

// Plan is one change to one client's file.
type Plan struct {
	Client string
	Path   string
	// Exists: the file is there now. Before is its content ("" if not),
	// After what it would be.
	Exists        bool
	Before, After string
	// Change is "add", "update", "remove" or "none" (already as asked).
	Change string
	// Entry is Yett's entry as the plan writes it, under the key it goes
	// in ("" when the plan removes it). It is made from Options alone, never
	// from the file, so it can be shown anywhere: the file itself may hold
	// other servers' tokens, and only Yett's own entry is Yett's to show.
	Entry string
}

// Changes are the values Plan.Change takes.
var Changes = []string{"add", "update", "remove", "none"}

// Make plans the change opts asks for. It reads the client's file and
// writes nothing.
func Make(opts Options) (Plan, error) {
	if !slices.Contains(Clients, opts.Client) {
		return Plan{}, fmt.Errorf("agentconfig: unknown client %q (one of %s)", opts.Client, strings.Join(Clients, ", "))
	}
	if !opts.Remove && !filepath.IsAbs(opts.Command) {
		return Plan{}, fmt.Errorf("agentconfig: the yett command must be an absolute path, not %q", opts.Command)
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = 180
	}
	path, err := pathFor(opts)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Client: opts.Client, Path: path}
	if !opts.Remove {
		p.Entry = entryText(opts)
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		p.Exists, p.Before = true, string(b)
	case !errors.Is(err, os.ErrNotExist):
		return Plan{}, fmt.Errorf("agentconfig: %w", err)
	}
	var had bool
	if opts.Client == "codex" {
		p.After, had, err = editTOML(p.Before, opts)
	} else {
		p.After, had, err = editJSON(p.Before, opts)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("%w: %s: %v", ErrUnreadable, path, err)
	}
	switch {
	case p.After == p.Before:
		p.Change = "none"
	case opts.Remove:
		p.Change = "remove"
	case had:
		p.Change = "update"
	default:
		p.Change = "add"
	}
	return p, nil
}

// entryText is Yett's entry for opts as a person reads it.
func entryText(opts Options) string {
	if opts.Client == "codex" {
		return tomlBlock(opts)
	}
	servers, value := entry(opts)
	b, _ := json.MarshalIndent(map[string]any{servers: map[string]any{ServerName: value}}, "", "  ")
	return string(b) + "\n"
}

// ClientOf is which of Clients an MCP client is, from the name it gives
// itself in clientInfo ("" for any other): Claude Code says "claude-code",
// Codex "codex-mcp-client" (both checked against the real clients), Cursor
// "cursor-vscode" and VS Code "Visual Studio Code" (with " - Insiders" in
// its preview). The name is the client's word: good for saying when a
// client last called, never for deciding anything.
func ClientOf(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.Contains(n, "claude"):
		return "claude"
	case strings.Contains(n, "codex"):
		return "codex"
	case strings.Contains(n, "cursor"):
		return "cursor"
	case strings.HasPrefix(n, "visual studio code"), n == "vscode":
		return "vscode"
	}
	return ""
}

// Locate is where the user's client files are, from the environment as a
// command line or the app sees it: the home directory ($HOME, else the
// system's), and VS Code's settings folder (%AppData% on Windows,
// $XDG_CONFIG_HOME when set, else "" for Make's default under home).
func Locate(getenv func(string) string) (home, configDir string) {
	home = getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	configDir = getenv("XDG_CONFIG_HOME")
	if runtime.GOOS == "windows" {
		configDir = getenv("AppData")
	}
	return home, configDir
}

// pathFor is the file of opts' client.
func pathFor(opts Options) (string, error) {
	if opts.Project != "" {
		dir, err := filepath.Abs(opts.Project)
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, map[string]string{
			"claude": ".mcp.json", "codex": filepath.Join(".codex", "config.toml"),
			"cursor": filepath.Join(".cursor", "mcp.json"), "vscode": filepath.Join(".vscode", "mcp.json"),
		}[opts.Client]), nil
	}
	if opts.Home == "" {
		return "", errors.New("agentconfig: no home directory")
	}
	switch opts.Client {
	case "claude":
		return filepath.Join(opts.Home, ".claude.json"), nil
	case "codex":
		return filepath.Join(opts.Home, ".codex", "config.toml"), nil
	case "cursor":
		return filepath.Join(opts.Home, ".cursor", "mcp.json"), nil
	}
	dir := opts.ConfigDir
	if dir == "" {
		if runtime.GOOS == "darwin" {
			dir = filepath.Join(opts.Home, "Library", "Application Support")
		} else {
			dir = filepath.Join(opts.Home, ".config")
		}
	}
	return filepath.Join(dir, "Code", "User", "mcp.json"), nil
}

// Apply writes the plan: a copy of the file as it was (path +
// BackupSuffix) when there was one, then the new content in its place in
// one rename, with the file's mode (0600 for a new file). A plan that
// changes nothing writes nothing. It refuses when the file changed since
// the plan was made.
func (p Plan) Apply() (backup string, err error) {
	if p.Change == "none" {
		return "", nil
	}
	cur, err := os.ReadFile(p.Path)
	switch {
	case err == nil && (!p.Exists || string(cur) != p.Before),
		errors.Is(err, os.ErrNotExist) && p.Exists:
		return "", fmt.Errorf("agentconfig: %s changed since the change was planned; plan it again", p.Path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("agentconfig: %w", err)
	}
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(p.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(p.Path), 0o700); err != nil {
		return "", fmt.Errorf("agentconfig: %w", err)
	}
	if p.Exists {
		backup = p.Path + BackupSuffix
		if err := writeFile(backup, []byte(p.Before), mode); err != nil {
			return "", err
		}
	}
	return backup, writeFile(p.Path, []byte(p.After), mode)
}

// writeFile replaces path with data in one rename, synced first.
func writeFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("agentconfig: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err == nil {
		err = f.Sync()
	}
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("agentconfig: writing %s: %w", path, err)
	}
	return nil
}

// Diff is the plan's change as lines: "- " removed, "+ " added, and the
// lines around them.
func (p Plan) Diff() string {
	a, b := strings.Split(strings.TrimSuffix(p.Before, "\n"), "\n"), strings.Split(strings.TrimSuffix(p.After, "\n"), "\n")
	if p.Before == "" {
		a = nil
	}
	// The common start and end; what lies between changed.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	var out bytes.Buffer
	for _, l := range a[max(0, i-2):i] {
		out.WriteString("  " + l + "\n")
	}
	for _, l := range a[i : len(a)-j] {
		out.WriteString("- " + l + "\n")
	}
	for _, l := range b[i : len(b)-j] {
		out.WriteString("+ " + l + "\n")
	}
	for _, l := range a[len(a)-j : min(len(a), len(a)-j+2)] {
		out.WriteString("  " + l + "\n")
	}
	return out.String()
}
