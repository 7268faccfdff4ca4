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
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
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
}

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

// jsonEntry is Yett's entry in a JSON client's file, in the order a person
// reads it.
type jsonEntry struct {
	Type    string             `json:"type,omitempty"`
	Command string             `json:"command"`
	Args    []string           `json:"args"`
	Env     *map[string]string `json:"env,omitempty"`
}

// entry is Yett's entry in a JSON client's file: the key its servers are
// under and the entry itself.
func entry(opts Options) (servers string, value jsonEntry) {
	value = jsonEntry{Command: opts.Command, Args: []string{"mcp"}}
	switch opts.Client {
	case "vscode":
		value.Type = "stdio"
		return "servers", value
	case "claude":
		value.Type = "stdio"
		value.Env = &map[string]string{}
	}
	return "mcpServers", value
}

// editJSON plans Yett's entry in a JSON (with comments) document; had says
// the entry was there.
func editJSON(before string, opts Options) (after string, had bool, err error) {
	servers, want := entry(opts)
	src := before
	if strings.TrimSpace(src) == "" {
		if opts.Remove {
			return before, false, nil
		}
		src = "{}"
	}
	v, err := hujson.Parse([]byte(src))
	if err != nil {
		return "", false, err
	}
	var doc map[string]any
	if err := json.Unmarshal(standard(v), &doc); err != nil {
		return "", false, errors.New("the document is not a JSON object")
	}
	list, hasList := doc[servers]
	if hasList {
		if _, ok := list.(map[string]any); !ok {
			return "", false, fmt.Errorf("%q is not an object", servers)
		}
	}
	m, _ := list.(map[string]any)
	current, had := m[ServerName]
	switch {
	case opts.Remove && !had:
		return before, false, nil
	case opts.Remove:
		patch, _ := json.Marshal([]map[string]any{{"op": "remove", "path": "/" + servers + "/" + ServerName}})
		if err := v.Patch(patch); err != nil {
			return "", false, err
		}
	case had && sameJSON(current, want):
		return before, true, nil
	default:
		if err := setMember(&v, servers, want); err != nil {
			return "", false, err
		}
	}
	out := string(v.Pack())
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	// Nothing but the entry changed.
	var got map[string]any
	if err := json.Unmarshal(standard(v), &got); err != nil {
		return "", false, err
	}
	wantDoc := cloneJSON(doc)
	if opts.Remove {
		delete(wantDoc[servers].(map[string]any), ServerName)
	} else {
		if wantDoc[servers] == nil {
			wantDoc[servers] = map[string]any{}
		}
		wantDoc[servers].(map[string]any)[ServerName] = want
	}
	if !sameJSON(got, wantDoc) {
		return "", false, errors.New("the edit would change more than Yett's entry")
	}
	return out, had, nil
}

// setMember puts Yett's entry (want) under servers in the document v, laid
// out in the document's own indentation, leaving every other byte as it
// was: hujson.Format would re-indent the whole file with tabs and add
// trailing commas that plain-JSON readers (Claude Code's) refuse.
func setMember(v *hujson.Value, servers string, want jsonEntry) error {
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return errors.New("the document is not a JSON object")
	}
	ind := indentOf(root)
	value := func(x any, depth int) (hujson.Value, error) {
		text, _ := json.MarshalIndent(x, strings.Repeat(ind, depth), ind)
		val, err := hujson.Parse(text)
		val.BeforeExtra = hujson.Extra(" ")
		return val, err
	}
	name := func(n string, depth int) hujson.Value {
		q, _ := json.Marshal(n)
		return hujson.Value{BeforeExtra: hujson.Extra("\n" + strings.Repeat(ind, depth)), Value: hujson.Literal(q)}
	}
	closeOn := func(o *hujson.Object, depth int) {
		if !bytes.Contains(o.AfterExtra, []byte("\n")) {
			o.AfterExtra = hujson.Extra("\n" + strings.Repeat(ind, depth))
		}
	}
	for i := range root.Members {
		if memberName(root.Members[i]) != servers {
			continue
		}
		list, ok := root.Members[i].Value.Value.(*hujson.Object)
		if !ok {
			return fmt.Errorf("%q is not an object", servers)
		}
		val, err := value(want, 2)
		if err != nil {
			return err
		}
		for j := range list.Members {
			if memberName(list.Members[j]) == ServerName {
				val.AfterExtra = list.Members[j].Value.AfterExtra
				list.Members[j].Value = val
				return nil
			}
		}
		list.Members = append(list.Members, hujson.ObjectMember{Name: after(list, name(ServerName, 2)), Value: val})
		closeOn(list, 1)
		return nil
	}
	val, err := value(map[string]any{ServerName: want}, 1)
	if err != nil {
		return err
	}
	root.Members = append(root.Members, hujson.ObjectMember{Name: after(root, name(servers, 1)), Value: val})
	closeOn(root, 0)
	return nil
}

// after makes a member appended to o keep what o's last line holds: the
// comment after the last member ("}, // keep me") stays on that line, and
// the closing brace keeps its own line.
func after(o *hujson.Object, n hujson.Value) hujson.Value {
	extra := o.AfterExtra
	i := bytes.LastIndexByte(extra, '\n')
	if i <= 0 {
		return n
	}
	n.BeforeExtra = append(append(hujson.Extra{}, extra[:i]...), n.BeforeExtra...)
	o.AfterExtra = append(hujson.Extra{}, extra[i:]...)
	return n
}

// memberName is an object member's name, unquoted.
func memberName(m hujson.ObjectMember) string {
	var s string
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		json.Unmarshal(lit, &s)
	}
	return s
}

// indentOf is the indentation unit of an object's members ("  " when it
// cannot tell).
func indentOf(o *hujson.Object) string {
	for _, m := range o.Members {
		extra := string(m.Name.BeforeExtra)
		if i := strings.LastIndex(extra, "\n"); i >= 0 && i+1 < len(extra) && strings.Trim(extra[i+1:], " \t") == "" {
			return extra[i+1:]
		}
	}
	return "  "
}

func standard(v hujson.Value) []byte {
	c := v.Clone()
	c.Standardize()
	return c.Pack()
}

// sameJSON compares two values as JSON documents.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

func cloneJSON(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// tomlBlock is Yett's table in Codex's config.toml.
func tomlBlock(opts Options) string {
	q, _ := json.Marshal(opts.Command) // a TOML basic string is a JSON string
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %s\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\ntool_timeout_sec = %d\n",
		ServerName, q, opts.ToolTimeout)
}

// editTOML plans Yett's table in a TOML document, as text: the table
// [mcp_servers.yett] and its subtables are replaced (or removed, or
// appended), every other line stays as written. The result is read back
// and compared with what was there.
func editTOML(before string, opts Options) (after string, had bool, err error) {
	var doc map[string]any
	if _, err := toml.Decode(before, &doc); err != nil {
		return "", false, err
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	current, had := servers[ServerName]
	lines := strings.SplitAfter(before, "\n")
	var kept []string
	in, found := false, false
	for _, l := range lines {
		if h, ok := tableHeader(l); ok {
			in = h == "mcp_servers."+ServerName || strings.HasPrefix(h, "mcp_servers."+ServerName+".")
			if in && !found {
				found = true
				if !opts.Remove {
					kept = append(kept, tomlBlock(opts))
				}
			}
		}
		if !in {
			kept = append(kept, l)
		}
	}
	if had && !found {
		return "", true, errors.New("Yett's entry is written in a form this editor does not change (an inline table or dotted keys): edit it by hand")
	}
	if !found && !opts.Remove {
		text := strings.Join(kept, "")
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if strings.TrimSpace(text) != "" {
			text += "\n"
		}
		kept = []string{text, tomlBlock(opts)}
	}
	after = strings.Join(kept, "")
	if !found && opts.Remove {
		return before, false, nil
	}
	if had && !opts.Remove {
		var want map[string]any
		toml.Decode(tomlBlock(opts), &want)
		if sameJSON(current, want["mcp_servers"].(map[string]any)[ServerName]) {
			return before, true, nil
		}
	}
	// Read it back: nothing but Yett's table changed.
	var got map[string]any
	if _, err := toml.Decode(after, &got); err != nil {
		return "", had, fmt.Errorf("the edit would not parse: %v", err)
	}
	wantDoc := cloneJSON(doc)
	gotDoc := cloneJSON(got)
	for _, d := range []map[string]any{wantDoc, gotDoc} {
		if s, ok := d["mcp_servers"].(map[string]any); ok {
			delete(s, ServerName)
			if len(s) == 0 {
				delete(d, "mcp_servers")
			}
		}
	}
	if !sameJSON(wantDoc, gotDoc) {
		return "", had, errors.New("the edit would change more than Yett's entry")
	}
	if !opts.Remove {
		s, _ := got["mcp_servers"].(map[string]any)
		var want map[string]any
		toml.Decode(tomlBlock(opts), &want)
		if !sameJSON(s[ServerName], want["mcp_servers"].(map[string]any)[ServerName]) {
			return "", had, errors.New("the edit does not read back as Yett's entry")
		}
	}
	return after, had, nil
}

// tableHeader reads a TOML table header line ("[a.b]", "[[a]]", with
// optional quotes and spaces around keys) as its dotted name.
func tableHeader(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if i := strings.Index(t, "#"); i >= 0 && !strings.ContainsAny(t[:i], `"'`) {
		t = strings.TrimSpace(t[:i])
	}
	if !strings.HasPrefix(t, "[") || !strings.HasSuffix(t, "]") {
		return "", false
	}
	t = strings.Trim(t, "[]")
	var parts []string
	for _, p := range strings.Split(t, ".") {
		parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
	}
	return strings.Join(parts, "."), true
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
