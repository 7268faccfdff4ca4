package vault

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/target"
)

// An MCP server is one sealed record of kind "mcp_server": an upstream MCP
// server whose tools Yett re-exports to agents under the server's name.
// Either a local server Yett starts itself over stdio (its command,
// arguments and environment, with secrets in environment variables) or a
// remote one over Streamable HTTP (its URL, with secrets in request
// headers). Everything is sealed, not only the secrets: a command or URL
// edited in the file would hand the secrets to another program or host, and
// the manifest catches that at the next unlock like any other altered
// record.
const kindMCPServer = "mcp_server"

// Changes to MCP servers, announced in EventChanged with the server named
// in Event.Credential (its id, name and new version).
const (
	ChangeMCPServerAdded   Change = "mcp_server_added"
	ChangeMCPServerEdited  Change = "mcp_server_edited"
	ChangeMCPServerRemoved Change = "mcp_server_removed"
)

// Errors of MCP servers.
var (
	ErrNoMCPServer     = errors.New("vault: no such MCP server")
	ErrMCPServerExists = errors.New("vault: an MCP server with that name exists")
)

// Transports of an MCP server.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Bounds of an MCP server.
const (
	maxMCPArgs       = 64
	maxMCPArgLen     = 4 << 10
	maxMCPEnv        = 64
	maxMCPValueLen   = 4 << 10
	maxMCPSecretLen  = 16 << 10
	maxMCPToolRules  = 1024
	maxMCPToolName   = 128
	maxMCPCommandLen = 4 << 10
)

var (
	mcpServerNameRe = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	authorizationRe = regexp.MustCompile(`^az-[A-Za-z0-9_-]{1,64}$`)
	envNameRe       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	headerNameRe    = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
)

// MCPServerSettings is what a person may change on a server after adding
// it.
type MCPServerSettings struct {
	// Approval is how its tools are approved unless Tools says otherwise:
	// ApprovalWrites (the default) lets tools that say they only read pass
	// on the run's session approval and asks a card for every other call;
	// ApprovalPerCall asks for every call; ApprovalSession lets every call
	// pass on the session.
	Approval Approval
	// Tools overrides Approval per tool, by the upstream's tool name: the
	// person's word, which the upstream's own hints never change.
	Tools         map[string]Approval
	Owner         string
	BackupRevoker string
}

// NewMCPServer is a server to add.
type NewMCPServer struct {
	Name      string // the prefix of its tools: github.create_issue
	Transport string // TransportStdio or TransportHTTP
	// Command, Args and Env start a stdio server (Command an absolute
	// path). Env holds the values that are not secret.
	Command string
	Args    []string
	Env     map[string]string
	// URL is a remote server's Streamable HTTP endpoint.
	URL string
	// OAuth names the OAuth authorization (backend/oauth, "az-...") whose
	// access token Yett sends a remote server as its bearer token,
	// refreshed under OAuth custody; "" for none. The token is never in
	// this record.
	OAuth string
	// Secrets are what Yett hands the server: environment variables of a
	// stdio server, request headers of a remote one ("Authorization":
	// "Bearer ...").
	Secrets map[string]Secret
	MCPServerSettings
}

// MCPServerView is a server without its secrets' values: safe for the UI
// and logs. SecretNames names the variables or headers Yett fills.
type MCPServerView struct {
	ID            string              `json:"id"`
	Name          string              `json:"name"`
	Transport     string              `json:"transport"`
	Command       string              `json:"command,omitempty"`
	Args          []string            `json:"args,omitempty"`
	Env           map[string]string   `json:"env,omitempty"`
	URL           string              `json:"url,omitempty"`
	OAuth         string              `json:"oauth,omitempty"`
	SecretNames   []string            `json:"secret_names"`
	Approval      Approval            `json:"approval"`
	Tools         map[string]Approval `json:"tools,omitempty"`
	Owner         string              `json:"owner"`
	BackupRevoker string              `json:"backup_revoker"`
	CreatedAt     time.Time           `json:"created_at"`
	Version       uint64              `json:"version"`
}

// ToolApproval is how tool of this server is approved: the person's word
// for the tool, else the server's mode.
func (s MCPServerView) ToolApproval(tool string) Approval {
	if a, ok := s.Tools[tool]; ok {
		return a
	}
	return s.Approval
}

// mcpServerRecord is the plaintext sealed in an "mcp_server" record.
type mcpServerRecord struct {
	Name          string              `json:"name"`
	Transport     string              `json:"transport"`
	Command       string              `json:"command,omitempty"`
	Args          []string            `json:"args,omitempty"`
	Env           map[string]string   `json:"env,omitempty"`
	URL           string              `json:"url,omitempty"`
	OAuth         string              `json:"oauth,omitempty"`
	Secrets       map[string][]byte   `json:"secrets,omitempty"`
	Approval      Approval            `json:"approval"`
	Tools         map[string]Approval `json:"tools,omitempty"`
	Owner         string              `json:"owner"`
	BackupRevoker string              `json:"backup_revoker"`
	CreatedAt     time.Time           `json:"created_at"`
}

// cachedServer is a server's view and its record's ciphertext as verified
// at unlock (or written since); it holds no secret in the clear.
type cachedServer struct {
	view   MCPServerView
	sealed []byte
}

func (s MCPServerSettings) validate() (MCPServerSettings, error) {
	if s.Approval == "" {
		s.Approval = ApprovalWrites
	}
	valid := func(a Approval) bool { return a == ApprovalSession || a == ApprovalPerCall || a == ApprovalWrites }
	if !valid(s.Approval) {
		return s, invalid("approval must be %q, %q or %q", ApprovalSession, ApprovalPerCall, ApprovalWrites)
	}
	if len(s.Tools) > maxMCPToolRules {
		return s, invalid("at most %d tool rules", maxMCPToolRules)
	}
	for name, a := range s.Tools {
		if name == "" || len(name) > maxMCPToolName || !printable(name, maxMCPToolName) {
			return s, invalid("a tool name is 1-%d printable characters", maxMCPToolName)
		}
		if !valid(a) {
			return s, invalid("tool %q: approval must be %q, %q or %q", name, ApprovalSession, ApprovalPerCall, ApprovalWrites)
		}
	}
	s.Owner, s.BackupRevoker = strings.TrimSpace(s.Owner), strings.TrimSpace(s.BackupRevoker)
	if !printable(s.Owner, 512) || !printable(s.BackupRevoker, 512) {
		return s, invalid("owner and backup revoker must be printable and at most 512 characters")
	}
	return s, nil
}

// CheckMCPServer says whether Add would accept s, without a vault: a
// command checks its input before it asks for a passphrase or a secret.
func CheckMCPServer(s NewMCPServer) error {
	_, err := s.validate()
	return err
}

func (s NewMCPServer) validate() (NewMCPServer, error) {
	s.Name = strings.TrimSpace(s.Name)
	if !mcpServerNameRe.MatchString(s.Name) {
		return s, invalid("name must be 1-32 lower-case letters, digits, - and _, starting with a letter (it prefixes the server's tools)")
	}
	if len(s.Secrets) > maxMCPEnv || len(s.Env) > maxMCPEnv {
		return s, invalid("at most %d variables and %d secrets", maxMCPEnv, maxMCPEnv)
	}
	for k, v := range s.Secrets {
		if n := v.Len(); n == 0 || n > maxMCPSecretLen {
			return s, invalid("secret %s must be 1 to %d bytes", k, maxMCPSecretLen)
		}
		if bytes.ContainsAny(v.b, "\x00\r\n") {
			return s, invalid("secret %s must be one line", k)
		}
	}
	switch s.Transport {
	case TransportStdio:
		if s.OAuth != "" {
			return s, invalid("a stdio server gets its secrets in its environment, not an OAuth authorization")
		}
		if s.URL != "" {
			return s, invalid("a stdio server has a command, not a URL")
		}
		if !strings.HasPrefix(s.Command, "/") && !windowsAbs(s.Command) || !printable(s.Command, maxMCPCommandLen) {
			return s, invalid("command must be an absolute path")
		}
		if len(s.Args) > maxMCPArgs {
			return s, invalid("at most %d arguments", maxMCPArgs)
		}
		for _, a := range s.Args {
			if len(a) > maxMCPArgLen || !utf8.ValidString(a) || strings.ContainsRune(a, 0) {
				return s, invalid("an argument is at most %d bytes of text", maxMCPArgLen)
			}
		}
		for k, v := range s.Env {
			if !envNameRe.MatchString(k) || len(v) > maxMCPValueLen || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return s, invalid("variable %q: a name of letters, digits and _ and a value of at most %d bytes", k, maxMCPValueLen)
			}
			if _, dup := s.Secrets[k]; dup {
				return s, invalid("variable %s is both a value and a secret", k)
			}
		}
		for k := range s.Secrets {
			if !envNameRe.MatchString(k) {
				return s, invalid("secret %q: an environment variable's name is letters, digits and _", k)
			}
		}
	case TransportHTTP:
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
			return s, invalid("a remote server has a URL, not a command")
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" || !printable(s.URL, 2048) {
			return s, invalid("url must be an http or https URL without user info")
		}
		for k := range s.Secrets {
			if !headerNameRe.MatchString(k) {
				return s, invalid("secret %q: a header's name is a token", k)
			}
		}
		if u.Scheme == "http" && (len(s.Secrets) > 0 || s.OAuth != "") && !target.PlainHTTPAllowed(u.Hostname()) {
			return s, invalid("secrets travel only over https, except to loopback")
		}
		if s.OAuth != "" {
			if !authorizationRe.MatchString(s.OAuth) {
				return s, invalid("oauth names an OAuth authorization (az-...)")
			}
			for k := range s.Secrets {
				if strings.EqualFold(k, "Authorization") {
					return s, invalid("a server with an OAuth authorization gets its Authorization header from it, not from a secret")
				}
			}
		}
	default:
		return s, invalid("transport must be %q or %q", TransportStdio, TransportHTTP)
	}
	set, err := s.MCPServerSettings.validate()
	if err != nil {
		return s, err
	}
	s.MCPServerSettings = set
	return s, nil
}

// windowsAbs reports whether p is a Windows absolute path (C:\...).
func windowsAbs(p string) bool {
	return len(p) > 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') && (p[0] >= 'A' && p[0] <= 'Z' || p[0] >= 'a' && p[0] <= 'z')
}

func (r *mcpServerRecord) view(id string, version uint64) MCPServerView {
	names := make([]string, 0, len(r.Secrets))
	for k := range r.Secrets {
		names = append(names, k)
	}
	sort.Strings(names)
	return MCPServerView{
		ID: id, Name: r.Name, Transport: r.Transport, Command: r.Command, Args: slices.Clone(r.Args), Env: cloneMap(r.Env),
		URL: r.URL, OAuth: r.OAuth, SecretNames: names, Approval: r.Approval, Tools: cloneMap(r.Tools), Owner: r.Owner,
		BackupRevoker: r.BackupRevoker, CreatedAt: r.CreatedAt, Version: version,
	}
}

func cloneMap[V any](m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (r *mcpServerRecord) wipe() {
	for _, s := range r.Secrets {
		clear(s)
	}
}

func serverRecordOf(s NewMCPServer, created time.Time) *mcpServerRecord {
	r := &mcpServerRecord{
		Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, OAuth: s.OAuth,
		Approval: s.Approval, Tools: s.Tools, Owner: s.Owner, BackupRevoker: s.BackupRevoker, CreatedAt: created.UTC(),
	}
	if len(s.Secrets) > 0 {
		r.Secrets = make(map[string][]byte, len(s.Secrets))
		for k, v := range s.Secrets {
			r.Secrets[k] = v.b
		}
	}
	return r
}

// decodeMCPServer parses an opened record and validates it like new input.
// The returned record holds its own copies of the secrets, which the
// caller wipes.
func decodeMCPServer(plaintext []byte) (*mcpServerRecord, error) {
	var r mcpServerRecord
	dec := json.NewDecoder(bytes.NewReader(plaintext))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		r.wipe()
		return nil, errors.New("MCP server record is not valid JSON of the expected shape")
	}
	in := NewMCPServer{Name: r.Name, Transport: r.Transport, Command: r.Command, Args: r.Args, Env: r.Env, URL: r.URL, OAuth: r.OAuth,
		MCPServerSettings: MCPServerSettings{Approval: r.Approval, Tools: r.Tools, Owner: r.Owner, BackupRevoker: r.BackupRevoker}}
	if len(r.Secrets) > 0 {
		in.Secrets = make(map[string]Secret, len(r.Secrets))
		for k, v := range r.Secrets {
			in.Secrets[k] = Secret{b: v}
		}
	}
	s, err := in.validate()
	if err != nil {
		r.wipe()
		return nil, err
	}
	return serverRecordOf(s, r.CreatedAt), nil
}

// verifyMCPServer is verifyAll's check of a server record at unlock: it
// must decode, and no two servers may share a name.
func verifyMCPServer(ref recordRef, sealed, plaintext []byte, servers map[string]cachedServer) error {
	r, err := decodeMCPServer(plaintext)
	if err != nil {
		return &DamagedError{Where: recordWhere(ref), Reason: err.Error()}
	}
	r.wipe()
	for _, s := range servers {
		if s.view.Name == r.Name {
			return &DamagedError{Where: recordWhere(ref), Reason: "two MCP servers have the same name"}
		}
	}
	servers[ref.ID] = cachedServer{view: r.view(ref.ID, ref.Version), sealed: sealed}
	return nil
}

// Add validates s, seals it as a new record and returns its view.
// Errors: ErrLocked, ErrInvalid, ErrMCPServerExists.
func (v *MCPServers) Add(s NewMCPServer) (MCPServerView, error) {
	s, err := s.validate()
	if err != nil {
		return MCPServerView{}, err
	}
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return MCPServerView{}, err
	}
	for _, c := range v.servers {
		if c.view.Name == s.Name {
			v.mu.Unlock()
			return MCPServerView{}, ErrMCPServerExists
		}
	}
	ref := recordRef{ID: "mcp_" + hex.EncodeToString(randomBytes(12)), Kind: kindMCPServer, Version: 1}
	view, err := v.MCPServers().putLocked(ref, serverRecordOf(s, v.opts.Now()))
	v.MCPServers().unlockAfterChange(err, ChangeMCPServerAdded, view)
	return view, err
}

func (v *MCPServers) putLocked(ref recordRef, r *mcpServerRecord) (MCPServerView, error) {
	pt, err := json.Marshal(r)
	if err != nil {
		return MCPServerView{}, fmt.Errorf("vault: %w", err)
	}
	sealed, err := v.putRecord(ref, pt)
	clear(pt)
	if err != nil {
		return MCPServerView{}, err
	}
	view := r.view(ref.ID, ref.Version)
	if v.servers == nil {
		v.servers = map[string]cachedServer{}
	}
	v.servers[ref.ID] = cachedServer{view: view, sealed: sealed}
	return view, nil
}

func (v *MCPServers) unlockAfterChange(err error, change Change, s MCPServerView) {
	v.unlockAnnouncing(err, change, CredentialRef{ID: s.ID, Name: s.Name, Version: s.Version})
}

// List returns every server's view, by name.
func (v *MCPServers) List() ([]MCPServerView, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	out := make([]MCPServerView, 0, len(v.servers))
	for _, s := range v.servers {
		out = append(out, s.view)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ByName finds a server by name. Errors: ErrLocked, ErrNoMCPServer.
func (v *MCPServers) ByName(name string) (MCPServerView, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return MCPServerView{}, err
	}
	for _, s := range v.servers {
		if s.view.Name == name {
			return s.view, nil
		}
	}
	return MCPServerView{}, ErrNoMCPServer
}

// openLocked opens server id's record at exactly version (0: the current
// one). v.mu held. The caller wipes the record.
func (v *MCPServers) openLocked(id string, version uint64) (*mcpServerRecord, recordRef, error) {
	s, ok := v.servers[id]
	ref, okRef := v.refs[id]
	if !ok || !okRef {
		return nil, recordRef{}, ErrNoMCPServer
	}
	if version != 0 && (s.view.Version != version || ref.Version != version) {
		return nil, recordRef{}, ErrCredentialChanged
	}
	pt, err := openRecord(v.keys, v.hdr.VaultID, ref, s.sealed)
	if err != nil {
		return nil, recordRef{}, fmt.Errorf("vault: the MCP server's record does not open: %w", err)
	}
	r, err := decodeMCPServer(pt)
	clear(pt)
	if err != nil {
		return nil, recordRef{}, fmt.Errorf("vault: the MCP server's record does not decode: %w", err)
	}
	return r, ref, nil
}

// Update replaces a server's settings (its tools' approval, owner and
// backup revoker). Errors: ErrLocked, ErrInvalid, ErrNoMCPServer.
func (v *MCPServers) Update(id string, s MCPServerSettings) (MCPServerView, error) {
	s, err := s.validate()
	if err != nil {
		return MCPServerView{}, err
	}
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return MCPServerView{}, err
	}
	r, ref, err := v.MCPServers().openLocked(id, 0)
	if err != nil {
		v.mu.Unlock()
		return MCPServerView{}, err
	}
	defer r.wipe()
	r.Approval, r.Tools, r.Owner, r.BackupRevoker = s.Approval, s.Tools, s.Owner, s.BackupRevoker
	ref.Version++
	view, err := v.MCPServers().putLocked(ref, r)
	v.MCPServers().unlockAfterChange(err, ChangeMCPServerEdited, view)
	return view, err
}

// Remove deletes a server and its secrets. Errors: ErrLocked,
// ErrNoMCPServer.
func (v *MCPServers) Remove(id string) error {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	s, ok := v.servers[id]
	if !ok {
		v.mu.Unlock()
		return ErrNoMCPServer
	}
	err := v.deleteRecord(id)
	if err == nil {
		delete(v.servers, id)
	}
	v.MCPServers().unlockAfterChange(err, ChangeMCPServerRemoved, s.view)
	return err
}

// SecretsOf returns the secrets of server id at exactly version, opened
// from the ciphertext verified at unlock, by variable or header name. The
// caller wipes each after use. A server edited or removed since the
// caller chose it is ErrCredentialChanged.
//
// Errors: ErrLocked, ErrCredentialChanged.
func (v *MCPServers) SecretsOf(id string, version uint64) (map[string]*Secret, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	if version == 0 {
		return nil, ErrCredentialChanged
	}
	r, _, err := v.MCPServers().openLocked(id, version)
	if errors.Is(err, ErrNoMCPServer) {
		return nil, ErrCredentialChanged
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Secret, len(r.Secrets))
	for k, b := range r.Secrets {
		out[k] = &Secret{b: b}
	}
	return out, nil
}
