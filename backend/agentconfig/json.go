package agentconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

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
