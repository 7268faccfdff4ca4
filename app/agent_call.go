package app

import (
	"path/filepath"

	"github.com/yettdev/yett/backend/activity"
)

// AgentCall is the newest call an agent made through Yett that has a
// result, as the audit log records it. The Connect page's checklist says
// "it worked" with it, and once there is one it never goes back to
// waiting for an agent. It names what the call used, never a value.
type AgentCall struct {
	// Readable is false while the vault is locked: the log cannot be read.
	Readable bool `json:"readable"`
	// Found: the log holds such a call. The fields below are empty when
	// it does not.
	Found bool `json:"found"`
	// Time is when the call was asked for (RFC 3339).
	Time string `json:"time"`
	// Channel is "http", "ssh", "oauth" or "mcp_server"; Operation is an
	// HTTP call's method, a named operation's name, "exec" for SSH or the
	// tool of an MCP server; Target the host (the SSH host, the server);
	// Path an HTTP call's path, without its query.
	Channel   string `json:"channel"`
	Operation string `json:"operation"`
	Target    string `json:"target"`
	Path      string `json:"path"`
	// Status is the HTTP status (an SSH command's exit code); Class the
	// result's class ("success", "client_error", "server_error",
	// "transport_error", "unknown").
	Status int    `json:"status"`
	Class  string `json:"class"`
	// Credential is the name of what the call used (a credential, an SSH
	// host, an MCP server, an OAuth account) as it is named now; "" when
	// it was removed since.
	Credential string `json:"credential"`
	// Agent and PID are the program and process of the run a person
	// approved ("" and 0 when the log does not name them).
	Agent string `json:"agent"`
	PID   int    `json:"pid"`
}

// LastAgentCall returns the newest call an agent (not Yett's own drill
// client) completed through Yett, from the audit log. It reads nothing
// while the vault is locked.
func (s *AuditService) LastAgentCall() AgentCall {
	out := AgentCall{}
	var call *activity.Call
	var at activity.Item
	out.Readable, _ = s.reader(func(x *activity.Index) {
		for p := (activity.Page{Limit: activity.MaxPageSize}); call == nil; {
			page := x.Activity(activity.Filter{}, p)
			for _, it := range page.Items {
				if c := it.Call; c != nil && !c.Drill && c.State == activity.CallCompleted && c.Result != nil {
					call, at = c, it
					break
				}
			}
			if !page.More {
				break
			}
			p.Before = page.Next
		}
		if call == nil {
			return
		}
		if sess, ok := x.Session(call.SessionID); ok && sess.Run != nil {
			out.Agent, out.PID = filepath.Base(sess.Run.Executable), sess.Run.PID
		}
	})
	if call == nil {
		return out
	}
	out.Found, out.Time = true, auditTime(at.Time)
	out.Channel, out.Operation, out.Target, out.Path = call.Channel, call.Operation, call.Target, call.Path
	out.Status, out.Class = call.Result.Status, string(call.Result.Class)
	out.Credential = s.nameOf(call.CredentialRef)
	return out
}

// nameOf is the name the credential, SSH host, MCP server or OAuth account
// with this ID has now ("" when there is none).
func (s *AuditService) nameOf(ref string) string {
	if ref == "" {
		return ""
	}
	if list, err := s.vault.Credentials().List(); err == nil {
		for _, c := range list {
			if c.ID == ref {
				return c.Name
			}
		}
	}
	if list, err := s.vault.SSHHosts().List(); err == nil {
		for _, h := range list {
			if h.ID == ref {
				return h.Name
			}
		}
	}
	if list, err := s.vault.MCPServers().List(); err == nil {
		for _, m := range list {
			if m.ID == ref {
				return m.Name
			}
		}
	}
	if custody := s.keeper.State().OAuth; custody != nil {
		if list, err := custody.Authorizations(); err == nil {
			for _, a := range list {
				if a.ID == ref {
					return a.Name
				}
			}
		}
	}
	return ""
}
