package agentconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

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
	var block map[string]any
	toml.Decode(tomlBlock(opts), &block)
	want := block["mcp_servers"].(map[string]any)[ServerName]
	switch {
	case opts.Remove && !had, !opts.Remove && had && sameJSON(current, want):
		return before, had, nil // already as asked
	}
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
		if !sameJSON(s[ServerName], want) {
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
