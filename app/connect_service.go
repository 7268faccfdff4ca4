package app

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/agentconfig"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/gateway"
)

// ConnectService is bound to the UI as window.go.app.ConnectService: what
// the "Connect an agent" page needs to tell a person, with the real path of
// the yett command line this app runs with (never "/path/to/yett"). Nothing
// here is secret.
type ConnectService struct {
	cliPath string
	goos    string
	// getenv finds the user's home and settings folders, where the agent
	// clients keep their MCP configuration (os.Getenv; a test's own).
	getenv func(string) string
	// planKey keys the names of planned changes (planID).
	planKey [32]byte
	// clients are the MCP clients that called through Yett and when
	// (gateway.ReadClients of the data directory); nil: none known.
	clients func() ([]gateway.ClientSeen, error)
	// gateway says whether the gateway listens for agents, and why not.
	gateway func() (listening bool, problem string)
}

func newConnectService(cliPath string, gateway func() (bool, string)) *ConnectService {
	s := &ConnectService{cliPath: cliPath, goos: goruntime.GOOS, gateway: gateway, getenv: os.Getenv}
	rand.Read(s.planKey[:])
	return s
}

// ConnectInfo is the page's data.
type ConnectInfo struct {
	// CLIPath is the yett command agents start as `yett mcp`; CLIFound
	// says whether a file is there.
	CLIPath  string `json:"cliPath"`
	CLIFound bool   `json:"cliFound"`
	// Listening: the gateway accepts agents now; Problem says why not.
	Listening bool   `json:"listening"`
	Problem   string `json:"problem"`
	// User is this computer's user name, offered as the owner of what a
	// person connects alone.
	User    string        `json:"user"`
	Clients []ClientSetup `json:"clients"`
}

// ClientSetup is how to add Yett to one MCP client: a command to paste in
// a terminal, and the configuration it writes, for doing it by hand.
type ClientSetup struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Agent is the client's id in AgentClients when Yett can write its
	// configuration itself, "" when it cannot.
	Agent      string `json:"agent"`
	Command    string `json:"command"`
	Config     string `json:"config"`
	ConfigFile string `json:"configFile"`
}

// Info returns the commands with this installation's path filled in.
func (s *ConnectService) Info() ConnectInfo {
	info := ConnectInfo{CLIPath: s.cliPath, User: localUser(), Clients: clientSetups(s.cliPath, s.goos)}
	if s.cliPath != "" {
		if fi, err := os.Stat(s.cliPath); err == nil && fi.Mode().IsRegular() {
			info.CLIFound = true
		}
	}
	if s.gateway != nil {
		info.Listening, info.Problem = s.gateway()
	}
	return info
}

// ServerName is the name agents know Yett by in their MCP configuration.
const ServerName = "yett"

func clientSetups(cli, goos string) []ClientSetup {
	if cli == "" {
		cli = "yett"
	}
	q := quoteFor(goos)
	server := map[string]any{"command": cli, "args": []string{"mcp"}}
	mcpJSON, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{ServerName: server}}, "", "  ")
	one, _ := json.Marshal(server)
	vscodeServer := map[string]any{"type": "stdio", "command": cli, "args": []string{"mcp"}}
	vscodeJSON, _ := json.MarshalIndent(map[string]any{"servers": map[string]any{ServerName: vscodeServer}}, "", "  ")
	vscodeOne, _ := json.Marshal(map[string]any{"name": ServerName, "type": "stdio", "command": cli, "args": []string{"mcp"}})
	link := "cursor://anysphere.cursor-deeplink/mcp/install?" + url.Values{
		"name": {ServerName}, "config": {base64.StdEncoding.EncodeToString(one)},
	}.Encode()
	open := map[string]string{"darwin": "open", "windows": "Start-Process"}[goos]
	if open == "" {
		open = "xdg-open"
	}
	home := "~"
	if goos == "windows" {
		home = "%USERPROFILE%"
	}
	// Codex ends a tool call after 60 s unless told otherwise, and an
	// approval card waits up to 120 s: give it longer than the card.
	toml := "[mcp_servers." + ServerName + "]\ncommand = " + tomlString(cli) + "\nargs = [\"mcp\"]\n" +
		"startup_timeout_sec = 20\n" + fmt.Sprintf("tool_timeout_sec = %d\n", int(approval.DefaultTimeout.Seconds())+60)
	return []ClientSetup{
		{ID: "claude-code", Name: agentClientNames["claude"], Agent: "claude",
			Command: "claude mcp add --scope user " + ServerName + " -- " + q(cli) + " mcp",
			Config:  string(mcpJSON), ConfigFile: ".mcp.json in a project, or with the command for every project"},
		{ID: "cursor", Name: agentClientNames["cursor"], Agent: "cursor",
			Command: open + " " + q(link),
			Config:  string(mcpJSON), ConfigFile: home + "/.cursor/mcp.json"},
		{ID: "codex", Name: agentClientNames["codex"], Agent: "codex",
			Command: "codex mcp add " + ServerName + " -- " + q(cli) + " mcp",
			Config:  toml, ConfigFile: home + "/.codex/config.toml"},
		{ID: "vscode", Name: agentClientNames["vscode"], Agent: "vscode",
			Command: "code --add-mcp " + q(string(vscodeOne)),
			Config:  string(vscodeJSON), ConfigFile: "mcp.json in your VS Code settings folder, or .vscode/mcp.json in a project"},
		{ID: "other", Name: "Any MCP client",
			Command: q(cli) + " mcp",
			Config:  string(mcpJSON), ConfigFile: "the client's MCP settings (a stdio server)"},
	}
}

// quoteFor quotes a word for the shell people paste into: POSIX shells on
// Linux and macOS, PowerShell on Windows.
func quoteFor(goos string) func(string) string {
	if goos == "windows" {
		return func(s string) string {
			if s != "" && !strings.ContainsAny(s, " \t'\"`$&|;<>()[]{}@#,") {
				return s
			}
			return "'" + strings.ReplaceAll(s, "'", "''") + "'"
		}
	}
	return func(s string) string {
		safe := s != ""
		for _, c := range s {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+:,@%=", c)) {
				safe = false
				break
			}
		}
		if safe {
			return s
		}
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
}

func tomlString(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a valid TOML basic string
	return string(b)
}

// localUser is the account name, without a Windows domain.
func localUser() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	name := u.Username
	if i := strings.LastIndexByte(name, '\\'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// AgentClient is an agent client whose own MCP configuration Yett can
// write (agentconfig), and whether Yett is in it now.
type AgentClient struct {
	ID   string `json:"id" enum:"AgentClientID"`
	Name string `json:"name"`
	// Path is the client's file for this user (the home directory as ~).
	Path string `json:"path"`
	// State is "connected" (Yett's entry is there as this app writes it),
	// "different" (an entry named yett is there but runs another command
	// or lacks a setting: updating replaces it), "absent", or "unreadable"
	// (the file cannot be edited safely, and is left alone: Problem says
	// why).
	State   string `json:"state" enum:"AgentClientState"`
	Problem string `json:"problem"`
	// LastCall is when this client last called a tool through Yett (RFC
	// 3339, "" if never), as the client names itself (Name in its MCP
	// clientInfo: its word, which decides nothing); LastProgram and
	// LastPID are the process the kernel says made that call.
	LastCall    string `json:"lastCall"`
	LastProgram string `json:"lastProgram"`
	LastPID     int    `json:"lastPid"`
}

// AgentChange is a change to one client's file, shown before it is
// written. It carries Yett's own entry and never the file's other
// content: the file may hold other servers' tokens.
type AgentChange struct {
	Client string `json:"client" enum:"AgentClientID"`
	Name   string `json:"name"`
	Path   string `json:"path"`
	// Change is "add", "update", "remove" or "none" (already as asked).
	Change string `json:"change" enum:"AgentChangeKind"`
	// Creates: the file does not exist yet and the change creates it.
	Creates bool `json:"creates"`
	// Entry is Yett's entry as it will be written ("" on a removal).
	Entry string `json:"entry"`
	// Plan names this change; ApplyAgent writes only the change it names,
	// and refuses if the file changed since.
	Plan string `json:"plan"`
}

// AgentWritten is what ApplyAgent did.
type AgentWritten struct {
	Path string `json:"path"`
	// Backup is the copy of the file as it was ("" when there was none).
	Backup string `json:"backup"`
	// Message says it in a sentence, with what to do next.
	Message string `json:"message"`
}

// agentClientStates are the values AgentClient.State takes.
var agentClientStates = []string{"connected", "different", "absent", "unreadable"}

var agentClientNames = map[string]string{"claude": "Claude Code", "codex": "Codex", "cursor": "Cursor", "vscode": "VS Code"}

// plan makes the change for client in the user's own configuration.
func (s *ConnectService) plan(client string, remove bool) (agentconfig.Plan, error) {
	if _, ok := agentClientNames[client]; !ok {
		return agentconfig.Plan{}, fmt.Errorf("Yett cannot write %q's configuration: it knows Claude Code, Codex, Cursor and VS Code", client)
	}
	if !remove && !filepath.IsAbs(s.cliPath) {
		return agentconfig.Plan{}, fmt.Errorf("Yett's command line was not found where this app expects it (%q), so there is no command to write", s.cliPath)
	}
	home, configDir := agentconfig.Locate(s.getenv)
	return agentconfig.Make(agentconfig.Options{
		Client: client, Command: s.cliPath, Home: home, ConfigDir: configDir, Remove: remove,
		ToolTimeout: int(approval.DefaultTimeout.Seconds()) + 60,
	})
}

// shown is path with the home directory written as ~.
func (s *ConnectService) shown(path string) string {
	home, _ := agentconfig.Locate(s.getenv)
	if rel, err := filepath.Rel(home, path); err == nil && home != "" && !strings.HasPrefix(rel, "..") {
		return filepath.Join("~", rel)
	}
	return path
}

// AgentClients says, for Claude Code, Codex, Cursor and VS Code, whether
// Yett is in the client's own configuration for this user. It reads the
// files and writes nothing.
func (s *ConnectService) AgentClients() []AgentClient {
	out := make([]AgentClient, 0, len(agentconfig.Clients))
	var seen []gateway.ClientSeen // newest first
	if s.clients != nil {
		seen, _ = s.clients() // unreadable: no times to show, the rest stands
	}
	for _, id := range agentconfig.Clients {
		c := AgentClient{ID: id, Name: agentClientNames[id]}
		for _, cs := range seen {
			if agentconfig.ClientOf(cs.Name) == id {
				c.LastCall, c.LastProgram, c.LastPID = cs.LastCall.UTC().Format(time.RFC3339), cs.Program, cs.PID
				break
			}
		}
		p, err := s.plan(id, false)
		if err != nil && !errors.Is(err, agentconfig.ErrUnreadable) {
			// No command to write (the CLI is missing): the file is still
			// read, to say whether an entry named yett is there.
			p, err = s.plan(id, true)
			p.Change = map[string]string{"remove": "update", "none": "add"}[p.Change]
		}
		switch {
		case err != nil:
			c.State, c.Problem = "unreadable", err.Error()
		case p.Change == "none":
			c.State = "connected"
		case p.Change == "update":
			c.State = "different"
		default:
			c.State = "absent"
		}
		c.Path = s.shown(p.Path)
		out = append(out, c)
	}
	return out
}

// PlanAgent shows what adding Yett to client's configuration (or, with
// remove, taking it out) would change, without writing anything.
func (s *ConnectService) PlanAgent(client string, remove bool) (AgentChange, error) {
	p, err := s.plan(client, remove)
	if err != nil {
		return AgentChange{}, err
	}
	return AgentChange{Client: client, Name: agentClientNames[client], Path: s.shown(p.Path), Change: p.Change,
		Creates: !p.Exists && p.Change != "none", Entry: p.Entry, Plan: s.planID(p)}, nil
}

// ApplyAgent writes the change PlanAgent showed (plan names it): only
// Yett's entry changes, the file as it was is kept beside it, and nothing
// is written if the file changed since the change was shown.
func (s *ConnectService) ApplyAgent(client string, remove bool, plan string) (AgentWritten, error) {
	p, err := s.plan(client, remove)
	if err != nil {
		return AgentWritten{}, err
	}
	if s.planID(p) != plan {
		return AgentWritten{}, fmt.Errorf("%s changed since the change was shown: nothing was written; look at the change again", s.shown(p.Path))
	}
	backup, err := p.Apply()
	if err != nil {
		return AgentWritten{}, err
	}
	w := AgentWritten{Path: s.shown(p.Path)}
	if backup != "" {
		w.Backup = s.shown(backup)
	}
	name := agentClientNames[client]
	switch {
	case p.Change == "none" && remove:
		w.Message = "Yett is not in " + name + "’s configuration: nothing to change."
	case p.Change == "none":
		w.Message = "Yett is already in " + name + "’s configuration: nothing to change."
	case remove:
		w.Message = "Yett is out of " + name + "’s configuration. Restart " + name + " (or reload its MCP servers)."
	default:
		w.Message = "Yett is in " + name + "’s configuration. Restart " + name + " (or reload its MCP servers) to use it."
	}
	return w, nil
}

// planID names a plan by its file and its content before and after, so an
// answer applies only to the change the person saw.
func (s *ConnectService) planID(p agentconfig.Plan) string {
	// Keyed by this process's own key: the name says nothing about the
	// file's content to anyone who sees it.
	h := hmac.New(sha256.New, s.planKey[:])
	for _, s := range []string{p.Client, p.Path, p.Before, p.After} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
