package app

import (
	"slices"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
)

// MCPNotRunning is a server's state when no Yett here runs it: the vault is
// locked, or another Yett (yett serve) serves this user's agents.
const MCPNotRunning = "not_running"

// mcpStates are the states an MCPServerView's State takes.
var mcpStates = []string{upstream.StateStarting, upstream.StateReady, upstream.StateFailed, MCPNotRunning}

// mcpTransports are how a server is reached.
var mcpTransports = []string{vault.TransportStdio, vault.TransportHTTP}

// MCPField is one name and value: an environment variable of a local
// server, or a request header of a remote one. In MCPServerForm.Secrets
// the value is a secret, wiped once stored and never sent back.
type MCPField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MCPToolMode is the person's approval mode for one tool.
type MCPToolMode struct {
	Tool     string `json:"tool"`
	Approval string `json:"approval" enum:"ApprovalMode"`
}

// MCPSettingsForm is what a person may change on a server after adding
// it, without restarting it.
type MCPSettingsForm struct {
	Approval      string        `json:"approval" enum:"ApprovalMode"` // "writes" (the default), "per_call" or "session"
	Tools         []MCPToolMode `json:"tools"`
	Owner         string        `json:"owner"`
	BackupRevoker string        `json:"backupRevoker"`
}

func (f MCPSettingsForm) settings() vault.MCPServerSettings {
	s := vault.MCPServerSettings{Approval: vault.Approval(f.Approval), Owner: f.Owner, BackupRevoker: f.BackupRevoker}
	if len(f.Tools) > 0 {
		s.Tools = map[string]vault.Approval{}
		for _, t := range f.Tools {
			s.Tools[t.Tool] = vault.Approval(t.Approval)
		}
	}
	return s
}

// MCPServerForm adds a server: a local one (Command, Args, Env, Secrets as
// environment variables) or a remote one (URL, Secrets as headers, or
// OAuth to connect its authorization: discovered, and consented in the
// browser).
type MCPServerForm struct {
	Name      string     `json:"name"`
	Transport string     `json:"transport" enum:"MCPTransport"`
	Command   string     `json:"command"`
	Args      []string   `json:"args"`
	Env       []MCPField `json:"env"`
	URL       string     `json:"url"`
	Secrets   []MCPField `json:"secrets"`
	OAuth     bool       `json:"oauth"`
	// ClientID is a client registered with the server's authorization
	// server ("" registers Yett there); ClientSecret goes with a
	// confidential one. Environment is the server's in the Inventory (and
	// its account's).
	ClientID     string          `json:"clientId"`
	ClientSecret string          `json:"clientSecret"`
	Environment  string          `json:"environment" enum:"Environment"`
	Settings     MCPSettingsForm `json:"settings"`
}

// MCPToolView is one of a server's tools as the server lists it.
type MCPToolView struct {
	Name string `json:"name"`
	// ReadOnlyHint is what the server says of it: an untrusted hint.
	ReadOnlyHint bool `json:"readOnlyHint"`
	// Approval is the person's mode for it, "" when it follows the
	// server's; AsksEachCall is what that comes to.
	Approval     string `json:"approval"`
	AsksEachCall bool   `json:"asksEachCall"`
}

// MCPServerView is a server as the UI shows it: its secrets by name only.
type MCPServerView struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Transport   string   `json:"transport" enum:"MCPTransport"`
	Command     string   `json:"command"`
	Args        []string `json:"args"`
	URL         string   `json:"url"`
	SecretNames []string `json:"secretNames"`
	// AuthorizationID names the OAuth account whose tokens the server
	// gets ("" for none); AuthorizationName is its name in Connections.
	AuthorizationID   string          `json:"authorizationId"`
	AuthorizationName string          `json:"authorizationName"`
	Settings          MCPSettingsForm `json:"settings"`
	State             string          `json:"state" enum:"MCPServerState"`
	Problem           string          `json:"problem"`
	Tools             []MCPToolView   `json:"tools"`
	Hidden            []string        `json:"hidden"`
	Controlled        bool            `json:"controlled"`
	Problems          []string        `json:"problems"`
	CreatedAt         string          `json:"createdAt"`
	Version           int64           `json:"version"`
}

func mcpServerView(v vault.MCPServerView) MCPServerView {
	out := MCPServerView{
		ID: v.ID, Name: v.Name, Transport: v.Transport, Command: v.Command, Args: nonNil(v.Args), URL: v.URL,
		SecretNames: nonNil(v.SecretNames), AuthorizationID: v.OAuth, State: MCPNotRunning, Tools: []MCPToolView{},
		Hidden: []string{}, Problems: []string{}, CreatedAt: v.CreatedAt.UTC().Format(time.RFC3339), Version: int64(v.Version),
		Settings: MCPSettingsForm{Approval: string(v.Approval), Tools: []MCPToolMode{}, Owner: v.Owner, BackupRevoker: v.BackupRevoker},
	}
	for tool, a := range v.Tools {
		out.Settings.Tools = append(out.Settings.Tools, MCPToolMode{Tool: tool, Approval: string(a)})
	}
	slices.SortFunc(out.Settings.Tools, func(a, b MCPToolMode) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// MCPConnectView is a started connection of a remote server's OAuth
// account: what discovery found, and the flow the browser finishes.
type MCPConnectView struct {
	Flow       FlowView `json:"flow"`
	Server     string   `json:"server"`
	Issuer     string   `json:"issuer"`
	Resource   string   `json:"resource"`
	Scopes     []string `json:"scopes"`
	Registered bool     `json:"registered"`
}

// MCPConnectResult is pushed as EventMCPConnect when a connection started
// by ConnectServer ends: the server added, or why not.
type MCPConnectResult struct {
	FlowID   string `json:"flowId"`
	ServerID string `json:"serverId"`
	Error    string `json:"error"`
}
