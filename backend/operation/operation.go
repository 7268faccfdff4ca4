package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/toolargs"
)

// Param is one typed parameter of an operation. A parameter named in the
// URL template's path ({name}) is a path segment; any other goes in the
// query.
type Param struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`              // string or integer
	Allowed  []string `json:"allowed,omitempty"` // the only values accepted; empty: any matching Pattern
	Pattern  string   `json:"pattern,omitempty"` // anchored RE2 for strings
	Required bool     `json:"required"`
}

// Operation binds an authorization to one API call shape. The agent
// supplies parameter values only; method, endpoint, client, scopes and
// token endpoint come from here and from the authorization.
type Operation struct {
	Name            string  `json:"name"`
	AuthorizationID string  `json:"authorization_id"`
	Description     string  `json:"description"`
	Method          string  `json:"method"`
	URLTemplate     string  `json:"url_template"`
	Params          []Param `json:"params"`
	// BodySchema, when set, is a JSON Schema subset the agent's body must
	// match (see CheckBody); without one the operation takes no body.
	BodySchema json.RawMessage `json:"body_schema,omitempty"`
	Approval   string          `json:"approval"` // session or per_call
}

// Approval modes.
const (
	ApprovalSession = "session"
	ApprovalPerCall = "per_call"
)

var (
	opNameRe    = regexp.MustCompile(`^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$`)
	paramNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	placeholder = regexp.MustCompile(`\{([^{}]*)\}`)
	opMethods   = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
	reserved    = []string{"http.", "yett.", "ssh."}
)

// ReservedParam names are used by the tool itself.
var ReservedParam = []string{"body", "idempotency_key"}

// Validate checks an operation's shape (not whether its authorization
// exists).
func (o *Operation) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
	}
	if len(o.Name) > 64 || !opNameRe.MatchString(o.Name) {
		return bad("operation name must look like tracker.create_issue (lowercase, a dot between parts)")
	}
	for _, p := range reserved {
		if strings.HasPrefix(o.Name, p) {
			return bad("operation names starting with %s are Yett's own", p)
		}
	}
	if err := checkText("description", o.Description, 0, 500); err != nil {
		return err
	}
	if !slices.Contains(opMethods, o.Method) {
		return bad("method must be one of GET, POST, PUT, PATCH, DELETE")
	}
	if o.Approval != ApprovalSession && o.Approval != ApprovalPerCall {
		return bad("approval must be session or per_call")
	}
	u, err := url.Parse(placeholder.ReplaceAllString(o.URLTemplate, "x"))
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return bad("url template must be an absolute URL without credentials, query or fragment")
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		return bad("url template must use https (http only for a loopback host)")
	}
	if strings.Contains(o.URLTemplate[:strings.Index(o.URLTemplate, "://")+3+len(u.Host)], "{") {
		return bad("the host of the url template is fixed; placeholders go in the path")
	}
	names := map[string]bool{}
	for _, p := range o.Params {
		if !paramNameRe.MatchString(p.Name) || slices.Contains(ReservedParam, p.Name) {
			return bad("parameter names are lowercase letters, digits and _ (not body or idempotency_key)")
		}
		if names[p.Name] {
			return bad("parameter %s is listed twice", p.Name)
		}
		names[p.Name] = true
		if p.Type != "string" && p.Type != "integer" {
			return bad("parameter %s: type must be string or integer", p.Name)
		}
		if p.Pattern != "" {
			if _, err := regexp.Compile("^(?:" + p.Pattern + ")$"); err != nil {
				return bad("parameter %s: pattern is not a valid regular expression", p.Name)
			}
		}
		for _, v := range p.Allowed {
			if err := p.check(v); err != nil && !errors.Is(err, errNotAllowed) {
				return bad("parameter %s: allowed value %q is not of its type", p.Name, clip(v, 40))
			}
		}
		if p.Type == "string" && len(p.Allowed) == 0 && p.Pattern == "" {
			return bad("parameter %s: a string parameter needs allowed values or a pattern", p.Name)
		}
	}
	for _, m := range placeholder.FindAllStringSubmatch(o.URLTemplate, -1) {
		if !names[m[1]] {
			return bad("placeholder {%s} has no parameter", clip(m[1], 40))
		}
		for _, p := range o.Params {
			if p.Name == m[1] && !p.Required {
				return bad("path parameter %s must be required", p.Name)
			}
		}
	}
	if len(o.BodySchema) > 0 {
		if o.Method == "GET" || o.Method == "DELETE" {
			return bad("a %s operation takes no body", o.Method)
		}
		if _, err := parseSchema(o.BodySchema); err != nil {
			return bad("body schema: %v", err)
		}
	}
	return nil
}

func isLoopback(h string) bool { return h == "127.0.0.1" || h == "::1" || h == "localhost" }

var errNotAllowed = errors.New("value not allowed")

// check validates one value's text against the parameter.
func (p Param) check(v string) error {
	if len(v) > 256 || !utf8.ValidString(v) {
		return fmt.Errorf("too long or not UTF-8")
	}
	if p.Type == "integer" {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("not an integer")
		}
	}
	if p.Pattern != "" {
		if ok, _ := regexp.MatchString("^(?:"+p.Pattern+")$", v); !ok {
			return errNotAllowed
		}
	}
	if len(p.Allowed) > 0 && !slices.Contains(p.Allowed, v) {
		return errNotAllowed
	}
	return nil
}

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

// SaveOperation creates or replaces an operation. Its authorization must
// exist.
func (m *Manager) SaveOperation(o Operation) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if _, err := loadRow(m.db, o.AuthorizationID); err != nil {
		return fmt.Errorf("%w: the operation's authorization does not exist", ErrInvalid)
	}
	spec, _ := json.Marshal(o)
	err := m.db.Exec(`INSERT INTO oauth_operations (name, authorization_id, spec, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET authorization_id = excluded.authorization_id, spec = excluded.spec, updated_at = excluded.updated_at`,
		o.Name, o.AuthorizationID, string(spec), time.Now().Unix()).Error
	if err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	m.changed()
	return nil
}

// RemoveOperation deletes an operation.
func (m *Manager) RemoveOperation(name string) error {
	res := m.db.Exec(`DELETE FROM oauth_operations WHERE name = ?`, name)
	if res.Error != nil {
		return fmt.Errorf("oauth: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	m.changed()
	return nil
}

// Operations lists every operation by name.
func (m *Manager) Operations() ([]Operation, error) {
	return m.loadOperations(`SELECT spec FROM oauth_operations ORDER BY name`)
}

// Operation returns one operation.
func (m *Manager) Operation(name string) (Operation, error) {
	ops, err := m.loadOperations(`SELECT spec FROM oauth_operations WHERE name = ?`, name)
	if err != nil {
		return Operation{}, err
	}
	if len(ops) != 1 {
		return Operation{}, ErrNotFound
	}
	return ops[0], nil
}

// loadOperations runs a query for spec columns and decodes each.
func (m *Manager) loadOperations(query string, args ...any) ([]Operation, error) {
	var rows []struct{ Spec string }
	if err := m.db.Raw(query, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	out := make([]Operation, 0, len(rows))
	for _, r := range rows {
		var o Operation
		if err := json.Unmarshal([]byte(r.Spec), &o); err != nil {
			return nil, fmt.Errorf("oauth: a stored operation does not decode")
		}
		out = append(out, o)
	}
	return out, nil
}

func (m *Manager) opsByAuthorization() (map[string][]string, error) {
	var rows []struct{ Name, AuthorizationID string }
	if err := m.db.Raw(`SELECT name, authorization_id FROM oauth_operations ORDER BY name`).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	out := map[string][]string{}
	for _, r := range rows {
		out[r.AuthorizationID] = append(out[r.AuthorizationID], r.Name)
	}
	return out, nil
}
