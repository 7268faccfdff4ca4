package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
)

// ChannelUpstream names calls of an upstream MCP server's tools in audit
// entries and cards; MethodUpstream is their method in the journal.
const (
	ChannelUpstream = "mcp_server"
	MethodUpstream  = "MCP"
)

// Upstreams is what the gateway asks of the upstream MCP servers
// (*upstream.Manager satisfies it): the tools they list now, one by the
// name agents call it, a call, and word of a change of the list.
type Upstreams interface {
	Tools() []upstream.Tool
	Lookup(name string) (upstream.Tool, bool)
	State(server string) (state string, defined bool)
	// Authorization is the OAuth authorization the server of this name
	// gets its tokens from ("" for none, or no such server).
	Authorization(server string) string
	Call(ctx context.Context, t upstream.Tool, args json.RawMessage) (*upstream.Result, error)
	Subscribe(fn func()) (cancel func())
}

// keyArg is the argument Yett adds to an upstream tool's schema for the
// agent's idempotency key, and takes out before the call is sent; a tool
// that has an argument of that name keeps it, and it is the key too.
const keyArg = "idempotency_key"

// upstreamName is the form of an upstream tool's name: the server's name,
// a dot, the tool's.
var upstreamName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}\.[A-Za-z0-9_.-]{1,128}$`)

// upstreamTools are the upstream servers' tools as agents see them, with
// the argument for an idempotency key added; a name a built-in tool or a
// named operation has is not listed (theirs wins).
func (g *Gateway) upstreamTools(taken map[string]bool) []*mcp.Tool {
	if g.upstream == nil {
		return nil
	}
	var out []*mcp.Tool
	for _, t := range g.upstream.Tools() {
		if taken[t.Name] {
			g.log.Warn("an upstream tool has the name of another tool and is not listed", "tool", t.Name)
			continue
		}
		l := *t.Listed
		l.InputSchema = withKeyArg(l.InputSchema)
		l.Description += ". Yett asks a person to approve this agent run and, unless they chose otherwise for the tool, every call; " +
			"give each logical action an idempotency_key and check it with yett.status after a disconnect."
		out = append(out, &l)
	}
	return out
}

// withKeyArg adds the optional idempotency_key to an object schema that
// does not have one.
func withKeyArg(schema any) any {
	m, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	props, _ := m["properties"].(map[string]any)
	if _, has := props[keyArg]; has {
		return schema
	}
	out := maps.Clone(m)
	np := maps.Clone(props)
	if np == nil {
		np = map[string]any{}
	}
	np[keyArg] = map[string]any{"type": "string", "maxLength": journal.MaxKeyLen,
		"description": "Yett's idempotency key for this call (letters, digits, . _ : -): the same key never runs twice; not passed to the server"}
	out["properties"] = np
	if out["type"] == nil {
		out["type"] = "object"
	}
	return out
}

// upstreamArgs are a call's arguments as they are sent (an object, its
// keys in order, the idempotency key Yett added taken out) and the key.
// Sending the re-encoded object means what the card shows, what the
// journal's digest covers and what the server gets are one thing, even
// for duplicate keys.
func upstreamArgs(t upstream.Tool, raw json.RawMessage) (args []byte, key string, err error) {
	obj := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return nil, "", argErr("arguments must be a JSON object")
		}
	}
	if v, ok := obj[keyArg]; ok {
		var k string
		if json.Unmarshal(v, &k) != nil {
			return nil, "", argErr("idempotency_key must be a string")
		}
		if key, err = checkKey(k, true); err != nil {
			return nil, "", err
		}
		if !ownsKeyArg(t) {
			delete(obj, keyArg)
		}
	}
	args, err = json.Marshal(obj)
	return args, key, err
}

// ownsKeyArg says whether the upstream's own schema has idempotency_key.
func ownsKeyArg(t upstream.Tool) bool {
	m, _ := t.Listed.InputSchema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	_, has := props[keyArg]
	return has
}

func argumentsSHA256(args []byte) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// upstreamDigest is the digest of a tool call as the journal keeps it.
func upstreamDigest(name string, args []byte) string {
	return requestDigest(ChannelUpstream, name, string(args))
}

// upstreamCall is the decision pipeline of an upstream server's tool: the
// steps of http.request, the server's record and its tool's approval
// mode (the person's, never the server's hints) deciding the cards.
func (c *conn) upstreamCall(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := c.g
	name := req.Params.Name
	server, _, _ := strings.Cut(name, ".")
	act := &audit.Action{Channel: ChannelUpstream, Operation: name, Target: server}
	// 1. Vault gate: a call while locked is refused and never kept.
	if g.vault.Status().State != vault.StateUnlocked {
		act.IdempotencyRef = lockedKey(req.Params.Arguments)
		return g.refuse(c, act, "", refusedLocked), nil
	}
	// 2. A tool a server lists now, and valid arguments.
	t, ok := g.upstream.Lookup(name)
	state, defined := "", false
	if !ok {
		// A server lists its tools and becomes ready at once: if it did
		// between the two reads, the tool is there now.
		if state, defined = g.upstream.State(server); defined && state == upstream.StateReady {
			t, ok = g.upstream.Lookup(name)
		}
	}
	// A server whose account cannot serve (a drill switched it off, it
	// was revoked, its owner must reconnect it) lists no tools: its calls
	// are refused for that, as an operation on the account would be.
	if r := g.upstreamAccount(server, t, ok); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	if !ok {
		if defined && state != upstream.StateReady {
			return g.refuse(c, act, "", &refusal{agentapi.CodeUnavailable, audit.ReasonUpstreamNotReady, fmt.Sprintf(
				"the MCP server %q is not connected now (%s); nothing was sent. %s", server, state, agentapi.CodeRetrySafe)}), nil
		}
		return g.refuse(c, act, "", &refusal{agentapi.CodeUnknownOperation, audit.ReasonInvalidRequest,
			"no MCP server in Yett lists this tool now (the server may be starting, stopped or removed); nothing was sent. List the tools again"}), nil
	}
	act.CredentialRef = t.Server.ID
	args, key, err := upstreamArgs(t, req.Params.Arguments)
	if err != nil {
		return g.refuse(c, act, "", &refusal{agentapi.CodeInvalid, audit.ReasonInvalidRequest, publicArgError(err)}), nil
	}
	act.IdempotencyRef, act.ArgumentsSHA256 = key, argumentsSHA256(args)
	if r := g.control(t.Server.ID); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 3. The run still matches the live process.
	if r := c.checkIdentity(); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 4. A session approval; its card names this tool and its arguments.
	card := approval.Call{Channel: ChannelUpstream, Method: MethodUpstream, Target: name, Credential: "MCP server " + t.Server.Name,
		Ref: t.Server.ID, Description: t.Listed.Description, Tool: name, Arguments: args}
	sess, r := c.session(ctx, act, &card)
	if r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 5. Per-call approval, by the person's mode for the tool: by
	// default every tool that does not say it only reads.
	var via *audit.Via
	if t.AsksEachCall() {
		card.Join = joinOf(key, upstreamDigest(name, args))
		v, err := g.askCall(ctx, sess, card)
		if err != nil {
			return g.refuse(c, act, sess.ID, approvalRefusal(err)), nil
		}
		via = v.Audit()
	}
	return g.send(ctx, c, &outgoing{
		host: server, path: t.Upstream, key: key, credRef: t.Server.ID, operation: name, approvedVia: via,
		perf: &upstreamAction{g: g, tool: t, args: args},
	}, sess, act), nil
}

// upstreamAccount is the refusal for a call of server's tools while the
// OAuth authorization it gets its tokens from cannot serve; nil when it
// has none or it serves.
func (g *Gateway) upstreamAccount(server string, t upstream.Tool, listed bool) *refusal {
	id := t.Server.OAuth
	if !listed {
		id = g.upstream.Authorization(server)
	}
	if id == "" || g.oauth == nil {
		return nil
	}
	if _, err := g.oauth.Check(id); err != nil {
		return oauthRefusal(err, fmt.Sprintf("the MCP server %q", server))
	}
	return nil
}

// upstreamAction is one tool call of an upstream server. The server holds
// its own secret (its environment, or Yett's client's headers): nothing
// is lent per call.
type upstreamAction struct {
	g    *Gateway
	tool upstream.Tool
	args []byte
}

func (a *upstreamAction) lend(context.Context) *refusal { return nil }
func (a *upstreamAction) release()                      {}

// describe: the journal keeps the tool and the digest of its arguments,
// not the arguments.
func (a *upstreamAction) describe(in *journal.Intent) {
	in.Method, in.RequestBytes, in.RequestSHA256 = MethodUpstream, int64(len(a.args)), upstreamDigest(a.tool.Name, a.args)
}

// upstreamOutcome is what Yett adds to a server's result: the outcome,
// where it is recorded, and whether Yett cut the result.
type upstreamOutcome struct {
	outcome
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
}

func (a *upstreamAction) perform(dctx context.Context, d *dispatchedCall) *mcp.CallToolResult {
	start := time.Now()
	res, err := a.g.upstream.Call(dctx, a.tool, a.args)
	dur := time.Since(start).Milliseconds()
	switch {
	case errors.Is(err, upstream.ErrNotReady):
		return d.notSent(&refusal{agentapi.CodeUnavailable, audit.ReasonUpstreamNotReady, fmt.Sprintf(
			"the MCP server %q is not connected now (starting, stopped, or edited since its tools were listed); nothing was sent. %s",
			a.tool.Server.Name, agentapi.CodeRetrySafe)})
	case err != nil && (dctx.Err() != nil || a.g.vault.Epoch() != d.sess.VaultEpoch):
		// A lock cancels the dispatch and stops the server; whichever
		// the call hears of first, the lock cut it.
		d.outcome(journal.Result{Class: string(audit.ResultUnknown)}, audit.Result{Class: audit.ResultUnknown, DurationMS: dur}, audit.ReasonCutByLock, nil)
		return d.said(agentapi.CodeStatusUnknown).refused("the vault was locked while this call was in flight: Yett cancelled it at the server " +
			"and stopped the server. It may have done part of its work or all of it; inspect before acting again. Sending it again with " +
			"idempotency_key " + d.key + " does not run it again")
	case errors.Is(err, upstream.ErrWithheld):
		d.outcome(journal.Result{Class: ClassWithheld}, audit.Result{Class: audit.ResultSuccess, DurationMS: dur}, audit.ReasonUpstreamWithheld, nil)
		return d.said(agentapi.CodeResponseRefused).refused("the server ran the call and answered; Yett withheld the answer because it could not " +
			"clean it of the server's secret. The action completed: do not send it again with idempotency_key " + d.key)
	case err != nil:
		d.outcome(journal.Result{Class: string(audit.ResultTransport)}, audit.Result{Class: audit.ResultTransport, DurationMS: dur}, audit.ReasonConnectionLost, nil)
		return d.said(agentapi.CodeStatusUnknown).refused(fmt.Sprintf("the connection to the MCP server %q broke while the call was in flight "+
			"(the server stopped or failed); it may not have run, or run in part or in full. Inspect before acting again: sending it again "+
			"with idempotency_key %s does not run it again", a.tool.Server.Name, d.key))
	}
	out := *res.Result
	class := audit.ResultSuccess
	switch {
	case res.ProtocolError:
		class = audit.ResultClientError
	case out.IsError:
		class = audit.ResultServerError
	}
	d.outcome(journal.Result{Class: string(class), ResponseBytes: int64(res.Bytes), ResponseSHA256: res.SHA256, Truncated: res.Truncated},
		audit.Result{Class: class, Bytes: int64(res.Bytes), DurationMS: dur}, "", nil)
	o := upstreamOutcome{outcome: d.said(agentapi.CodeCompleted), Server: a.tool.Server.Name, Tool: a.tool.Upstream, Bytes: res.Bytes, Truncated: res.Truncated}
	line := fmt.Sprintf("[Yett: %s, request %s, audit entry %d", agentapi.CodeCompleted, d.id, d.entry)
	if res.Truncated {
		line += fmt.Sprintf("; the server sent %d bytes and Yett cut the result at its cap, so this is only the start of it", res.Bytes)
		if a.tool.Listed.OutputSchema != nil {
			// Its structured content is gone: a client that checks the
			// tool's output schema must not take the rest for the whole.
			out.IsError = true
		}
	}
	out.Content = append(append([]mcp.Content(nil), out.Content...), &mcp.TextContent{Text: line + "]"})
	out.Meta = mcp.Meta{"yett": o}
	return &out
}
