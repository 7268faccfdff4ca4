package app

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/user"
	goruntime "runtime"
	"strings"

	"github.com/yettdev/yett/backend/approval"
)

// ConnectService is bound to the UI as window.go.app.ConnectService: what
// the "Connect an agent" page needs to tell a person, with the real path of
// the yett command line this app runs with (never "/path/to/yett"). Nothing
// here is secret.
type ConnectService struct {
	cliPath string
	goos    string
	// gateway says whether the gateway listens for agents, and why not.
	gateway func() (listening bool, problem string)
}

func newConnectService(cliPath string, gateway func() (bool, string)) *ConnectService {
	return &ConnectService{cliPath: cliPath, goos: goruntime.GOOS, gateway: gateway}
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
	ID         string `json:"id"`
	Name       string `json:"name"`
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
		{ID: "claude-code", Name: "Claude Code",
			Command: "claude mcp add --scope user " + ServerName + " -- " + q(cli) + " mcp",
			Config:  string(mcpJSON), ConfigFile: ".mcp.json in a project, or with the command for every project"},
		{ID: "cursor", Name: "Cursor",
			Command: open + " " + q(link),
			Config:  string(mcpJSON), ConfigFile: home + "/.cursor/mcp.json"},
		{ID: "codex", Name: "Codex",
			Command: "codex mcp add " + ServerName + " -- " + q(cli) + " mcp",
			Config:  toml, ConfigFile: home + "/.codex/config.toml"},
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
