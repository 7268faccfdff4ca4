package operation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/target"
)

// Errors callers branch on. Their texts are written for a person: they name
// the field and the rule, never an agent's value.
var (
	ErrInvalid  = errors.New("operation: invalid input")
	ErrNotFound = errors.New("operation: no such operation")
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
	Approval   string          `json:"approval"` // session, per_call or writes
	// ReadOnly is the person's word that the operation only reads (a GET
	// of a profile, a search): agents' clients are told so (the tool's
	// read-only hint) and may call it without asking their own user. With
	// the approval "writes" it goes on the run's session approval, where
	// an operation not marked read-only asks on every call; with session
	// or per_call it changes nothing in Yett's approvals.
	ReadOnly bool `json:"read_only,omitempty"`
}

// MaxToolName is the longest tool name an operation is listed under: a
// client names a tool by its server and its own name, and Cursor drops a
// tool whose two names together pass 60 characters ("yett" and a
// separator leave 55).
const MaxToolName = 55

// ToolName is the tool an operation is listed under: its name, or, when
// that is longer than MaxToolName, its first 46 characters, "_" and 8 hex
// digits of its SHA-256, the same for the same name on every machine.
func ToolName(name string) string {
	if len(name) <= MaxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:MaxToolName-9] + "_" + hex.EncodeToString(sum[:4])
}

// Approval modes.
const (
	ApprovalSession = "session"
	ApprovalPerCall = "per_call"
	// ApprovalWrites: reads pass, writes ask (an operation is a read when
	// the person marked it ReadOnly).
	ApprovalWrites = "writes"
)

// AsksEachCall says whether a call of the operation needs a card of its
// own, beyond the run's session approval.
func (o *Operation) AsksEachCall() bool {
	return o.Approval == ApprovalPerCall || o.Approval == ApprovalWrites && !o.ReadOnly
}

var (
	opNameRe    = regexp.MustCompile(`^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$`)
	paramNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	placeholder = regexp.MustCompile(`\{([^{}]*)\}`)
	reserved    = []string{"http.", "yett.", "ssh."}
)

// Methods are the HTTP methods an operation may use, and ParamTypes the
// types its parameters may have (the window's closed sets are generated
// from both).
var (
	Methods    = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
	ParamTypes = []string{"string", "integer"}
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
	if !slices.Contains(Methods, o.Method) {
		return bad("method must be one of GET, POST, PUT, PATCH, DELETE")
	}
	if o.Approval != ApprovalSession && o.Approval != ApprovalPerCall && o.Approval != ApprovalWrites {
		return bad("approval must be session, per_call or writes")
	}
	u, err := url.Parse(placeholder.ReplaceAllString(o.URLTemplate, "x"))
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return bad("url template must be an absolute URL without credentials, query or fragment")
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && target.PlainHTTPAllowed(u.Hostname())) {
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
		if !slices.Contains(ParamTypes, p.Type) {
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

// HostURL is the fixed scheme, host and port of the operation's URL
// template, as backend/target reads them (the path is a placeholder's).
func (o *Operation) HostURL() (target.URL, error) {
	u, err := url.Parse(placeholder.ReplaceAllString(o.URLTemplate, "x"))
	if err != nil || u.Host == "" {
		return target.URL{}, fmt.Errorf("%w: url template must be an absolute URL", ErrInvalid)
	}
	t, err := target.Parse(u.Scheme + "://" + u.Host + "/")
	if err != nil {
		return target.URL{}, fmt.Errorf("%w: url template's host: %v", ErrInvalid, err)
	}
	return t, nil
}

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

// checkText bounds a one-line text field.
func checkText(field, v string, minLen, maxLen int) error {
	if len(strings.TrimSpace(v)) < minLen || len(v) > maxLen || !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\r\n") {
		return fmt.Errorf("%w: %s must be %d to %d characters on one line", ErrInvalid, field, minLen, maxLen)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
