package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
)

// Kinds of rows.
const (
	KindOAuth = "oauth"
	KindHTTP  = "http_credential"
)

// CreatedManual is how a credential whose secret a person typed in was
// created (the other values are OAuth's flows).
const CreatedManual = "manual_secret"

// Fact is what a Source knows of one authorization it holds. It holds no
// secret and no token.
type Fact struct {
	ID          string
	Kind        string
	Name        string
	Provider    string // provider or host
	AccountRef  string
	Scopes      []string
	Environment string // "" when the source keeps none
	CreatedVia  string
	ConnectedAt time.Time
	LastRefresh time.Time
	State       string // active, needs_reconnection, suspended, disabled, revoked
	StateReason string
	Revocation  string
	// Operations are what agents may use it through.
	Operations []string
	// Disable is what Yett does when the person presses Revoke (or
	// Remove), in one line.
	Disable string
	// Declared is what the person declared when connecting it, taken over
	// the first time the inventory sees the row.
	Declared Declared
	// OwnersHeld: the source itself keeps the owner and backup revoker
	// (Declared, on every read); the inventory shows them as the source
	// has them and writes edits of them through it (OwnerKeeper).
	OwnersHeld bool
	owners     OwnerKeeper // the source, when OwnersHeld
	// Drillable: revocation drills apply (an OAuth authorization).
	Drillable bool
	// Endpoints are the provider's token and authorization endpoints (a
	// drill checks no credential binding reaches them).
	Endpoints []string
	// MCPServers name the upstream MCP servers that get their tokens from
	// this authorization (their tools are what a drill must see cut off),
	// and MCPServerIDs are their ids (their calls' credential in the audit
	// log).
	MCPServers   []string
	MCPServerIDs []string
}

// Declared is an owner declaration made before the inventory held the row.
type Declared struct {
	Owner         string
	BackupRevoker string
	ReviewBy      time.Time
}

// Source lists the authorizations one kind of custody holds. Adding a kind
// of authorization to the inventory (SSH keys) is one more Source.
type Source interface {
	Facts(ctx context.Context) ([]Fact, error)
}

// OwnerKeeper is a Source that keeps the owner and backup revoker of its
// rows itself (Fact.OwnersHeld): an SSH host has them on its record, which
// the Hosts view edits too, so there is one copy and the inventory writes
// through it.
type OwnerKeeper interface {
	SetOwners(ctx context.Context, id, owner, backupRevoker string) error
}

// Authorizations is what the inventory reads of OAuth custody
// (*oauth.Custody satisfies it): its authorizations, and who the person
// declared answers for each when connecting it (taken over once); and the
// one thing it writes there: the environment, which custody names on cards
// and in audit entries.
type Authorizations interface {
	Authorizations() ([]oauth.AuthorizationView, error)
	Declarations() (map[string]oauth.Declaration, error)
	SetEnvironment(id, env string) error
}

// Operations is the named-operation catalogue (*operation.Catalogue).
type Operations interface {
	List() []operation.Operation
}

// OAuthSource lists OAuth custody's authorizations with the named
// operations that use each.
type OAuthSource struct {
	Custody    Authorizations
	Operations Operations
	// MCPServers are the vault's upstream MCP servers, some of which get
	// their tokens from an authorization; nil lists none.
	MCPServers MCPServers
}

// Facts implements Source.
func (s OAuthSource) Facts(context.Context) ([]Fact, error) {
	list, err := s.Custody.Authorizations()
	if err != nil {
		return nil, err
	}
	declared, err := s.Custody.Declarations()
	if err != nil {
		return nil, err
	}
	byAuth := map[string][]string{}
	if s.Operations != nil {
		for _, o := range s.Operations.List() {
			byAuth[o.AuthorizationID] = append(byAuth[o.AuthorizationID], o.Name)
		}
	}
	servers := serversByAuthorization(s.MCPServers)
	out := make([]Fact, 0, len(list))
	for _, a := range list {
		ops := byAuth[a.ID]
		slices.Sort(ops)
		var names, ids []string
		for _, m := range servers[a.ID] {
			ops = append(ops, m.Name+".* (MCP server)")
			names, ids = append(names, m.Name), append(ids, m.ID)
		}
		out = append(out, Fact{
			MCPServers: names, MCPServerIDs: ids,
			ID: a.ID, Kind: KindOAuth, Name: a.Name, Provider: a.ProviderHost, AccountRef: a.AccountRef,
			Scopes: a.Scopes, Environment: a.Environment, CreatedVia: a.CreatedHow, ConnectedAt: a.ConnectedAt,
			LastRefresh: a.LastRefresh, State: a.State, StateReason: a.StateReason, Revocation: a.Revocation,
			Operations: ops, Disable: oauthDisable(a), Drillable: true, Endpoints: a.Endpoints,
			Declared: Declared(declared[a.ID]),
		})
	}
	return out, nil
}

func oauthDisable(a oauth.AuthorizationView) string {
	if a.RevocationHost == "" {
		return "Revoke: Yett drops its tokens and refuses its operations at once; " + a.ProviderHost +
			" has no revocation endpoint, so revoke the app's access in the provider's settings too."
	}
	return "Revoke: Yett drops its tokens and refuses its operations at once, then revokes both tokens at " +
		a.RevocationHost + " (RFC 7009) and checks they are inactive."
}

// Credentials is what the inventory reads of the vault's HTTP credentials
// (*vault.Vault satisfies it). While the vault is locked it lists none.
type Credentials interface {
	List() ([]vault.CredentialView, error)
}

// CredentialSource lists the vault's HTTP credentials: a manual secret
// names no account, so its account reference is the name the person gave
// it, and its scope is where Yett injects it.
type CredentialSource struct {
	Vault Credentials
}

// Facts implements Source. A locked vault lists nothing.
func (s CredentialSource) Facts(context.Context) ([]Fact, error) {
	list, err := unlockedList(s.Vault.List())
	if err != nil {
		return nil, err
	}
	out := make([]Fact, 0, len(list))
	for _, c := range list {
		scopes := make([]string, 0, len(c.Hosts)*max(len(c.PathPrefixes), 1))
		for _, h := range c.Hosts {
			if len(c.PathPrefixes) == 0 {
				scopes = append(scopes, h)
			}
			for _, p := range c.PathPrefixes {
				scopes = append(scopes, h+p)
			}
		}
		out = append(out, Fact{
			ID: c.ID, Kind: KindHTTP, Name: c.Name, Provider: strings.Join(c.Hosts, ", "), AccountRef: c.Name,
			Scopes: scopes, CreatedVia: CreatedManual, ConnectedAt: c.CreatedAt, LastRefresh: c.SecretSetAt,
			State: "active", Operations: []string{fmt.Sprintf("http.request (%s)", approvalWord(c.Approval))},
			Disable: "Remove: Yett deletes the secret from the vault and refuses http.request to its hosts at once; revoke the key at the provider too.",
		})
	}
	return out, nil
}

func approvalWord(a vault.Approval) string {
	switch a {
	case vault.ApprovalPerCall:
		return "each call approved"
	case vault.ApprovalWrites:
		return "reads on the session approval, each write approved"
	}
	return "session approval"
}

// KindSSH is an SSH host: a client key in the vault and the host it opens.
const KindSSH = "ssh_host"

// SSHHosts is what the inventory reads of the vault's SSH hosts, and the
// host settings it writes: the owner and backup revoker (*vault.Vault
// satisfies it). While the vault is locked it lists none.
type SSHHosts interface {
	List() ([]vault.SSHHostView, error)
	Get(id string) (vault.SSHHostView, error)
	Update(id string, s vault.SSHHostSettings) (vault.SSHHostView, error)
}

// SSHSource lists the vault's SSH hosts: the account is user@host, the
// scope is the host's command rules (every command when it has none). The
// host record keeps its owner and backup revoker (the Hosts view edits
// them there): the inventory reads them from it every time and writes its
// edits of them to it (SetOwners).
type SSHSource struct {
	Vault SSHHosts
}

// Facts implements Source. A locked vault lists nothing.
func (s SSHSource) Facts(context.Context) ([]Fact, error) {
	list, err := unlockedList(s.Vault.List())
	if err != nil {
		return nil, err
	}
	out := make([]Fact, 0, len(list))
	for _, h := range list {
		addr := h.Address
		if h.Port != 22 {
			addr = fmt.Sprintf("[%s]:%d", h.Address, h.Port)
		}
		scopes := []string{"any command (each approved)"}
		if len(h.Rules) > 0 {
			scopes = append([]string{}, h.Rules...)
		}
		state, reason := "active", ""
		switch {
		case h.HostKeyAlert != nil:
			state, reason = "needs_reconnection", "the host presented host key "+h.HostKeyAlert.Fingerprint+", which is not pinned"
		case len(h.HostKeys) == 0:
			state, reason = "needs_reconnection", "no host key pinned yet"
		}
		out = append(out, Fact{
			ID: h.ID, Kind: KindSSH, Name: h.Name, Provider: addr, AccountRef: h.User + "@" + addr,
			Scopes: scopes, CreatedVia: "ssh_key " + h.KeyFingerprint, ConnectedAt: h.CreatedAt,
			State: state, StateReason: reason, Operations: []string{fmt.Sprintf("ssh.exec (%s)", approvalWord(h.Approval))},
			Disable:  "Remove: Yett deletes the host and its private key from the vault and refuses ssh.exec to it at once; remove its public key from the host's authorized_keys too.",
			Declared: Declared{Owner: h.Owner, BackupRevoker: h.BackupRevoker}, OwnersHeld: true,
		})
	}
	return out, nil
}

// SetOwners implements OwnerKeeper: it writes the owner and backup revoker
// on the host record and keeps the host's other settings. (The vault has
// no versioned settings update: a Hosts edit saved between the read and
// the write of this one loses to it, as two Hosts edits do.)
func (s SSHSource) SetOwners(_ context.Context, id, owner, backupRevoker string) error {
	h, err := s.Vault.Get(id)
	if err != nil {
		return err
	}
	_, err = s.Vault.Update(id, vault.SSHHostSettings{Approval: h.Approval, Rules: h.Rules, Timeout: h.Timeout,
		Record: h.Record, Owner: owner, BackupRevoker: backupRevoker})
	return err
}

// KindMCPServer is an upstream MCP server: the secrets Yett hands it (its
// environment, or its request headers) and the tools agents reach through
// it.
const KindMCPServer = "mcp_server"

// MCPServers is what the inventory reads of the vault's upstream MCP
// servers, and the settings it writes: the owner and backup revoker
// (*vault.MCPServers satisfies it). While the vault is locked it lists
// none.
type MCPServers interface {
	List() ([]vault.MCPServerView, error)
	Update(id string, s vault.MCPServerSettings) (vault.MCPServerView, error)
}

// serversByAuthorization names, by authorization, the MCP servers that
// get their tokens from it; a locked vault (or none) names none.
func serversByAuthorization(v MCPServers) map[string][]vault.MCPServerView {
	out := map[string][]vault.MCPServerView{}
	if v == nil {
		return out
	}
	list, err := v.List()
	if err != nil {
		return out
	}
	for _, m := range list {
		if m.OAuth != "" {
			out[m.OAuth] = append(out[m.OAuth], m)
		}
	}
	for _, ms := range out {
		slices.SortFunc(ms, func(a, b vault.MCPServerView) int { return strings.Compare(a.Name, b.Name) })
	}
	return out
}

// MCPSource lists the vault's upstream MCP servers: the account is where
// Yett reaches the server, the scope its secrets' names. The server record
// keeps its owner and backup revoker, as a host's does.
type MCPSource struct {
	Vault MCPServers
}

// Facts implements Source. A locked vault lists nothing.
func (s MCPSource) Facts(context.Context) ([]Fact, error) {
	list, err := unlockedList(s.Vault.List())
	if err != nil {
		return nil, err
	}
	out := make([]Fact, 0, len(list))
	for _, m := range list {
		where, via := m.URL, "secret header"
		if m.Transport == vault.TransportStdio {
			where, via = m.Command, "secret environment"
		}
		scopes := []string{"no secret"}
		if len(m.SecretNames) > 0 {
			scopes = nil
			for _, n := range m.SecretNames {
				scopes = append(scopes, via+" "+n)
			}
		}
		out = append(out, Fact{
			ID: m.ID, Kind: KindMCPServer, Name: m.Name, Provider: where, AccountRef: m.Transport + " " + where,
			Scopes: scopes, CreatedVia: "mcp_server " + m.Transport, ConnectedAt: m.CreatedAt, State: "active",
			Operations: []string{fmt.Sprintf("%s.* (%s)", m.Name, approvalWord(m.Approval))},
			Disable:    "Remove: Yett stops the server, deletes it and its secrets from the vault, and agents lose its tools at once; revoke the token at its issuer too.",
			Declared:   Declared{Owner: m.Owner, BackupRevoker: m.BackupRevoker}, OwnersHeld: true,
		})
	}
	return out, nil
}

// SetOwners implements OwnerKeeper: it writes the owner and backup revoker
// on the server record and keeps its other settings.
func (s MCPSource) SetOwners(_ context.Context, id, owner, backupRevoker string) error {
	list, err := s.Vault.List()
	if err != nil {
		return err
	}
	for _, m := range list {
		if m.ID == id {
			_, err = s.Vault.Update(id, vault.MCPServerSettings{Approval: m.Approval, Tools: m.Tools, Owner: owner, BackupRevoker: backupRevoker})
			return err
		}
	}
	return vault.ErrNoMCPServer
}

// unlockedList is a vault list a source reads: a locked or uncreated
// vault lists nothing, which is no error.
func unlockedList[T any](list []T, err error) ([]T, error) {
	if errors.Is(err, vault.ErrLocked) || errors.Is(err, vault.ErrNotInitialised) {
		return nil, nil
	}
	return list, err
}
