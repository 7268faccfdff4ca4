package operation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/toolargs"
)

// Call is an operation rendered from an agent's arguments.
type Call struct {
	Method string
	URL    string
	Host   string // host[:port]
	Path   string
	Body   []byte
	Key    string // idempotency key, "" when none was given
}

// ArgError is a refusal safe to show the agent: it names the parameter and
// the rule, never echoes the value.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

func argErr(format string, a ...any) error { return &ArgError{Msg: fmt.Sprintf(format, a...)} }

// Render validates an agent's arguments (a JSON object) and builds the
// call. Unknown fields, a key given twice or in two letter cases, values
// outside the allowed set, a path parameter that is a dot segment and
// bodies that do not match the schema are refused. The URL is read by
// target.Parse, as every request URL is.
func (o *Operation) Render(raw json.RawMessage) (*Call, error) {
	obj, err := toolargs.Object(raw)
	if errors.Is(err, toolargs.ErrDuplicate) {
		return nil, argErr("arguments: %v", err)
	}
	if err != nil {
		return nil, argErr("arguments must be a single JSON object")
	}
	args := make(map[string]any, len(obj))
	for k, v := range obj {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if dec.Decode(&x) != nil {
			return nil, argErr("arguments must be a single JSON object")
		}
		args[k] = x
	}
	values := map[string]string{}
	for k, v := range args {
		if slices.Contains(ReservedParam, k) {
			continue
		}
		i := slices.IndexFunc(o.Params, func(p Param) bool { return p.Name == k })
		if i < 0 {
			return nil, argErr("unknown parameter %q", clip(k, 40))
		}
		p := o.Params[i]
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		default:
			return nil, argErr("parameter %s must be a %s", p.Name, p.Type)
		}
		if err := p.check(s); err != nil {
			if errors.Is(err, errNotAllowed) {
				return nil, argErr("parameter %s: the value is not one this operation allows", p.Name)
			}
			return nil, argErr("parameter %s must be a %s (%v)", p.Name, p.Type, err)
		}
		values[k] = s
	}
	for _, p := range o.Params {
		if _, ok := values[p.Name]; p.Required && !ok {
			return nil, argErr("parameter %s is required", p.Name)
		}
	}
	c := &Call{Method: o.Method}
	if k, ok := args["idempotency_key"]; ok {
		s, _ := k.(string)
		if !validKey(s) {
			return nil, argErr("idempotency_key may contain only letters, digits and . _ : - (at most 128)")
		}
		c.Key = s
	}
	inPath := map[string]bool{}
	var dot string
	rendered := placeholder.ReplaceAllStringFunc(o.URLTemplate, func(m string) string {
		name := m[1 : len(m)-1]
		inPath[name] = true
		if v := values[name]; v == "." || v == ".." {
			dot = name
		}
		return url.PathEscape(values[name])
	})
	if dot != "" {
		// A server resolves it to another path than the operation's,
		// whatever the parameter's pattern allows.
		return nil, argErr("parameter %s: . and .. are not allowed in a path", dot)
	}
	q := url.Values{}
	for _, p := range o.Params {
		if v, ok := values[p.Name]; ok && !inPath[p.Name] {
			q.Set(p.Name, v)
		}
	}
	if len(q) > 0 {
		rendered += "?" + q.Encode()
	}
	t, err := target.Parse(rendered)
	if err != nil {
		// Its text names the rule (a dot segment hidden behind an encoded
		// slash, say), never the value.
		return nil, argErr("the parameters do not make a valid URL: %s", strings.TrimPrefix(err.Error(), target.ErrInvalid.Error()+": "))
	}
	c.URL, c.Host, c.Path = t.String(), t.Authority(), t.Path
	body, hasBody := args["body"]
	switch {
	case len(o.BodySchema) == 0 && hasBody:
		return nil, argErr("this operation takes no body")
	case len(o.BodySchema) > 0:
		if !hasBody {
			return nil, argErr("body is required")
		}
		s, _ := parseSchema(o.BodySchema)
		if err := s.check("body", body, 0); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(body)
		c.Body = b
	}
	return c, nil
}

func validKey(k string) bool {
	return k != "" && len(k) <= journal.MaxKeyLen && journal.KeyAlphabet(k)
}

// InputSchema is the operation's MCP tool input schema.
func (o *Operation) InputSchema() json.RawMessage {
	props := map[string]any{}
	var required []string
	for _, p := range o.Params {
		s := map[string]any{"type": p.Type}
		if len(p.Allowed) > 0 {
			if p.Type == "integer" {
				var ns []int64
				for _, a := range p.Allowed {
					n, _ := strconv.ParseInt(a, 10, 64)
					ns = append(ns, n)
				}
				s["enum"] = ns
			} else {
				s["enum"] = p.Allowed
			}
		}
		if p.Pattern != "" && p.Type == "string" {
			s["pattern"] = "^(?:" + p.Pattern + ")$"
		}
		props[p.Name] = s
		if p.Required {
			required = append(required, p.Name)
		}
	}
	if len(o.BodySchema) > 0 {
		props["body"] = o.BodySchema
		required = append(required, "body")
	}
	props["idempotency_key"] = map[string]any{"type": "string", "maxLength": 128,
		"description": "names this logical action; reuse it only to retry the same action"}
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}
