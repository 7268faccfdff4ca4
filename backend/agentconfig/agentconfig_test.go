package agentconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
)

const yettCmd = "/opt/Yett Apps/yett"

func opts(t *testing.T, client string) Options {
	home := t.TempDir()
	return Options{Client: client, Command: yettCmd, Home: home, ConfigDir: filepath.Join(home, ".config")}
}

// apply plans and applies o, failing the test on an error.
func apply(t *testing.T, o Options) Plan {
	t.Helper()
	p, err := Make(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	return p
}

// jsonAt reads a JSON-with-comments file into a map.
func jsonAt(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err = hujson.Standardize(b)
	if err != nil {
		t.Fatalf("%s no longer parses: %v", path, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Each client's file gets Yett's entry in the client's own shape, in a
// fresh home; a second connect plans nothing; remove takes the entry out.
func TestEachClientsShape(t *testing.T) {
	for _, tt := range []struct {
		client, file, servers string
		entry                 map[string]any
	}{
		{"claude", ".claude.json", "mcpServers", map[string]any{"type": "stdio", "command": yettCmd, "args": []any{"mcp"}, "env": map[string]any{}}},
		{"cursor", ".cursor/mcp.json", "mcpServers", map[string]any{"command": yettCmd, "args": []any{"mcp"}}},
		{"vscode", ".config/Code/User/mcp.json", "servers", map[string]any{"type": "stdio", "command": yettCmd, "args": []any{"mcp"}}},
	} {
		t.Run(tt.client, func(t *testing.T) {
			o := opts(t, tt.client)
			p := apply(t, o)
			if p.Change != "add" || p.Path != filepath.Join(o.Home, tt.file) || p.Exists {
				t.Fatalf("plan %+v", p)
			}
			doc := jsonAt(t, p.Path)
			got := doc[tt.servers].(map[string]any)[ServerName]
			if !sameJSON(got, tt.entry) {
				t.Fatalf("entry %v, want %v", got, tt.entry)
			}
			if fi, _ := os.Stat(p.Path); fi.Mode().Perm() != 0o600 {
				t.Errorf("a new file has mode %v", fi.Mode().Perm())
			}
			if again, _ := Make(o); again.Change != "none" {
				t.Fatalf("connecting twice plans %q", again.Change)
			}
			o.Remove = true
			if r := apply(t, o); r.Change != "remove" {
				t.Fatalf("remove: %+v", r)
			}
			if _, ok := jsonAt(t, p.Path)[tt.servers].(map[string]any)[ServerName]; ok {
				t.Fatal("the entry is still there after remove")
			}
			if again, _ := Make(o); again.Change != "none" {
				t.Fatalf("removing twice plans %q", again.Change)
			}
		})
	}
}

// An existing file keeps every byte that is not Yett's entry: other
// servers, settings, comments, its indentation; the backup is the file as
// it was; a changed command path updates the entry in place.
func TestJSONKeepsWhatIsThere(t *testing.T) {
	o := opts(t, "vscode")
	o.Project = t.TempDir()
	path := filepath.Join(o.Project, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := "{\n    // my servers\n    \"servers\": {\n        \"github\": { \"type\": \"http\", \"url\": \"https://api.githubcopilot.com/mcp/\" }, // keep me\n    },\n    \"inputs\": [],\n}\n"
	os.WriteFile(path, []byte(orig), 0o644)
	p := apply(t, o)
	b, _ := os.ReadFile(path)
	got := string(b)
	for _, keep := range []string{"// my servers", "// keep me", `"github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" }`, `"inputs": []`} {
		if !strings.Contains(got, keep) {
			t.Errorf("lost %q:\n%s", keep, got)
		}
	}
	if !strings.Contains(got, "\n        \""+ServerName+"\": {\n            \"type\": \"stdio\",\n            \"command\": ") {
		t.Errorf("the entry does not follow the file's indentation:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("the file's mode changed to %v", fi.Mode().Perm())
	}
	if back, _ := os.ReadFile(path + BackupSuffix); string(back) != orig {
		t.Fatalf("the backup is not the file as it was: %q", back)
	}
	if !strings.Contains(p.Diff(), "+         \""+ServerName+"\": {") || strings.Contains(p.Diff(), "- ") {
		t.Errorf("diff:\n%s", p.Diff())
	}
	o.Command = "/usr/bin/yett"
	if u := apply(t, o); u.Change != "update" {
		t.Fatalf("a moved yett: %+v", u)
	}
	doc := jsonAt(t, path)
	if c := doc["servers"].(map[string]any)[ServerName].(map[string]any)["command"]; c != "/usr/bin/yett" {
		t.Fatalf("command %v", c)
	}
	if len(doc["servers"].(map[string]any)) != 2 {
		t.Fatalf("servers %v", doc["servers"])
	}
	o.Remove = true
	apply(t, o)
	b, _ = os.ReadFile(path)
	if !strings.Contains(string(b), "// keep me") || strings.Contains(string(b), ServerName) {
		t.Fatalf("after remove:\n%s", b)
	}
}

// Claude Code's ~/.claude.json is plain JSON with much else in it: the edit
// adds no trailing comma or comment, and every other key stays.
func TestClaudeFileStaysPlainJSON(t *testing.T) {
	o := opts(t, "claude")
	path := filepath.Join(o.Home, ".claude.json")
	orig := `{
  "numStartups": 7,
  "projects": {
    "/src/app": { "allowedTools": [], "mcpServers": {} }
  },
  "mcpServers": {
    "other": { "type": "stdio", "command": "other-server", "args": [], "env": {} }
  }
}
`
	os.WriteFile(path, []byte(orig), 0o600)
	apply(t, o)
	b, _ := os.ReadFile(path)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("~/.claude.json is no longer plain JSON: %v\n%s", err, b)
	}
	if doc["numStartups"] != float64(7) || len(doc["mcpServers"].(map[string]any)) != 2 || doc["projects"] == nil {
		t.Fatalf("%s", b)
	}
}

// Codex's config.toml: Yett's table is added after what is there, with a
// tool timeout longer than an approval card; comments, other servers and
// settings stay; an existing table (and its env subtable) is replaced in
// place; remove takes both out.
func TestCodexTOML(t *testing.T) {
	o := opts(t, "codex")
	path := filepath.Join(o.Home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o700)
	orig := "# my settings\nmodel = \"o4\"\napproval_policy = \"on-request\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\" # local\nargs = []\n\n[profiles.fast]\nmodel = \"mini\"\n"
	os.WriteFile(path, []byte(orig), 0o600)
	p := apply(t, o)
	b, _ := os.ReadFile(path)
	got := string(b)
	if !strings.HasPrefix(got, orig) {
		t.Fatalf("what was there changed:\n%s", got)
	}
	var doc struct {
		Model      string `toml:"model"`
		MCPServers map[string]struct {
			Command           string   `toml:"command"`
			Args              []string `toml:"args"`
			StartupTimeoutSec int      `toml:"startup_timeout_sec"`
			ToolTimeoutSec    int      `toml:"tool_timeout_sec"`
		} `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(got, &doc); err != nil {
		t.Fatal(err)
	}
	y := doc.MCPServers[ServerName]
	if y.Command != yettCmd || len(y.Args) != 1 || y.Args[0] != "mcp" || y.ToolTimeoutSec <= 120 || y.StartupTimeoutSec == 0 || doc.MCPServers["docs"].Command != "docs-server" {
		t.Fatalf("%+v", doc)
	}
	if p.Change != "add" || !strings.Contains(p.Diff(), "+ [mcp_servers.yett]") {
		t.Fatalf("%+v\n%s", p, p.Diff())
	}
	if again, _ := Make(o); again.Change != "none" {
		t.Fatalf("connecting twice plans %q", again.Change)
	}
	// A table written by hand, with an env subtable, in the middle.
	hand := "[mcp_servers.yett]\ncommand = \"/old/yett\"\nargs = [\"mcp\"]\n\n[mcp_servers.yett.env]\nFOO = \"bar\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\n"
	os.WriteFile(path, []byte(hand), 0o600)
	if u := apply(t, o); u.Change != "update" {
		t.Fatalf("%+v", u)
	}
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), "/old/yett") || strings.Contains(string(b), "FOO") || !strings.Contains(string(b), "[mcp_servers.docs]\ncommand = \"docs-server\"\n") {
		t.Fatalf("update in place:\n%s", b)
	}
	o.Remove = true
	apply(t, o)
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), ServerName) || !strings.Contains(string(b), "[mcp_servers.docs]") {
		t.Fatalf("after remove:\n%s", b)
	}
}

// A file that does not parse, or holds Yett's entry in a shape the editor
// does not change, is refused and left as it was.
func TestUnreadableFilesAreLeftAlone(t *testing.T) {
	for _, tt := range []struct{ client, file, text string }{
		{"cursor", ".cursor/mcp.json", `{"mcpServers": {`},
		{"cursor", ".cursor/mcp.json", `["not", "an", "object"]`},
		{"cursor", ".cursor/mcp.json", `{"mcpServers": ["x"]}`},
		{"codex", ".codex/config.toml", "model = \n"},
		{"codex", ".codex/config.toml", "mcp_servers = { yett = { command = \"/x\" } }\n"},
		{"codex", ".codex/config.toml", "mcp_servers.yett.command = \"/x\"\n"},
	} {
		o := opts(t, tt.client)
		path := filepath.Join(o.Home, tt.file)
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(tt.text), 0o600)
		if _, err := Make(o); !errors.Is(err, ErrUnreadable) {
			t.Errorf("%s %q: %v", tt.client, tt.text, err)
		}
		if b, _ := os.ReadFile(path); string(b) != tt.text {
			t.Errorf("%s: the file changed", tt.client)
		}
	}
}

// A plan is applied only to the file it was made from.
func TestApplyRefusesAFileChangedSincePlanned(t *testing.T) {
	o := opts(t, "cursor")
	p, err := Make(o)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p.Path), 0o700)
	os.WriteFile(p.Path, []byte(`{"mcpServers": {"new": {"command": "n"}}}`), 0o600)
	if _, err := p.Apply(); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("applied over a newer file: %v", err)
	}
	if m := jsonAt(t, p.Path); len(m["mcpServers"].(map[string]any)) != 1 {
		t.Fatal("the newer file was changed")
	}
}

// Project files are the project's, and the command must be absolute.
func TestProjectPathsAndCommand(t *testing.T) {
	proj := t.TempDir()
	for client, rel := range map[string]string{"claude": ".mcp.json", "codex": ".codex/config.toml", "cursor": ".cursor/mcp.json", "vscode": ".vscode/mcp.json"} {
		p, err := Make(Options{Client: client, Command: yettCmd, Home: "/nonexistent", Project: proj})
		if err != nil || p.Path != filepath.Join(proj, rel) {
			t.Errorf("%s: %q, %v", client, p.Path, err)
		}
	}
	if _, err := Make(Options{Client: "codex", Command: "yett", Home: t.TempDir()}); err == nil {
		t.Error("a relative command was accepted")
	}
	if _, err := Make(Options{Client: "zed", Command: yettCmd, Home: t.TempDir()}); err == nil {
		t.Error("an unknown client was accepted")
	}
}

// Whatever a client's file holds, planning never panics, and a plan that
// changes it yields a file that parses and holds exactly Yett's entry (or
// none, for a removal).
func FuzzMake(f *testing.F) {
	f.Add("{}", false)
	f.Add("{\n  \"mcpServers\": {\"a\": {}}, // c\n}", false)
	f.Add("[mcp_servers.yett]\ncommand = \"x\"\n[mcp_servers.yett.env]\nA = \"b\"\n", true)
	f.Add("# c\nmodel = \"x\"\n[a]\nb = 1\n", false)
	f.Fuzz(func(t *testing.T, text string, remove bool) {
		for _, client := range []string{"cursor", "codex"} {
			o := opts(t, client)
			o.Remove = remove
			path, _ := pathFor(o)
			os.MkdirAll(filepath.Dir(path), 0o700)
			os.WriteFile(path, []byte(text), 0o600)
			p, err := Make(o)
			if err != nil || p.Change == "none" {
				continue
			}
			var has bool
			if client == "codex" {
				var doc map[string]any
				if _, err := toml.Decode(p.After, &doc); err != nil {
					t.Fatalf("codex: the plan does not parse: %v\n%q", err, p.After)
				}
				s, _ := doc["mcp_servers"].(map[string]any)
				_, has = s[ServerName]
			} else {
				b, err := hujson.Standardize([]byte(p.After))
				var doc map[string]any
				if err != nil || json.Unmarshal(b, &doc) != nil {
					t.Fatalf("cursor: the plan does not parse: %v\n%q", err, p.After)
				}
				s, _ := doc["mcpServers"].(map[string]any)
				_, has = s[ServerName]
			}
			if has == remove {
				t.Fatalf("%s: remove=%v, entry present %v:\n%q", client, remove, has, p.After)
			}
		}
	})
}

// A plan's Entry is Yett's entry exactly as the file then holds it, and
// never anything else of the file: here each file holds another server
// with a token, which must not reach Entry (the window shows Entry).
func TestEntryIsYettsEntryOnly(t *testing.T) {
	const token = "CANARY-other-server-token"
	for _, tt := range []struct{ client, file, before string }{
		{"claude", ".claude.json", `{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "` + token + `"}}}}`},
		{"cursor", ".cursor/mcp.json", `{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "` + token + `"}}}}`},
		{"vscode", ".config/Code/User/mcp.json", `{"servers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "` + token + `"}}}}`},
		{"codex", ".codex/config.toml", "[mcp_servers.gh]\ncommand = \"gh-mcp\"\nenv = { GITHUB_TOKEN = \"" + token + "\" }\n"},
	} {
		t.Run(tt.client, func(t *testing.T) {
			o := opts(t, tt.client)
			path := filepath.Join(o.Home, tt.file)
			os.MkdirAll(filepath.Dir(path), 0o700)
			if err := os.WriteFile(path, []byte(tt.before), 0o600); err != nil {
				t.Fatal(err)
			}
			p := apply(t, o)
			if p.Change != "add" || strings.Contains(p.Entry, token) {
				t.Fatalf("change %q, entry:\n%s", p.Change, p.Entry)
			}
			if tt.client == "codex" {
				var got, want map[string]any
				if _, err := toml.DecodeFile(path, &got); err != nil {
					t.Fatal(err)
				}
				if _, err := toml.Decode(p.Entry, &want); err != nil {
					t.Fatalf("Entry is not TOML: %v\n%s", err, p.Entry)
				}
				if !sameJSON(got["mcp_servers"].(map[string]any)[ServerName], want["mcp_servers"].(map[string]any)[ServerName]) {
					t.Fatalf("Entry %v is not what the file holds: %v", want, got)
				}
			} else {
				var want map[string]any
				if err := json.Unmarshal([]byte(p.Entry), &want); err != nil {
					t.Fatalf("Entry is not JSON: %v\n%s", err, p.Entry)
				}
				if len(want) != 1 {
					t.Fatalf("Entry names more than Yett's servers key: %v", want)
				}
				for servers, v := range want {
					got := jsonAt(t, path)[servers].(map[string]any)
					if !sameJSON(got[ServerName], v.(map[string]any)[ServerName]) {
						t.Fatalf("Entry %v is not what the file holds: %v", v, got[ServerName])
					}
				}
			}
			if p, err := Make(Options{Client: tt.client, Home: o.Home, ConfigDir: o.ConfigDir, Remove: true}); err != nil || p.Entry != "" || p.Change != "remove" {
				t.Fatalf("remove plan: %+v, %v", p, err)
			}
		})
	}
}

func TestClientOf(t *testing.T) {
	for name, want := range map[string]string{
		"claude-code": "claude", "codex-mcp-client": "codex", "cursor-vscode": "cursor", "Visual Studio Code": "vscode",
		"Visual Studio Code - Insiders": "vscode", "mcp-inspector": "", "": "", "code-server": "",
	} {
		if got := ClientOf(name); got != want {
			t.Errorf("ClientOf(%q) = %q, want %q", name, got, want)
		}
	}
}
