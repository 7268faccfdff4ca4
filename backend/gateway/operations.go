package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/vault"
)

// ChannelOAuth names named operations in audit entries and approval cards.
const ChannelOAuth = "oauth"

// Lender is all the gateway asks of OAuth custody (*oauth.Custody satisfies
// it): an authorization's local state, checked before any card or network
// call; a token lent for one approved and recorded request (the only path
// that refreshes); and word of an authorization disabled, to end the
// sessions that could use it. Nothing here returns a token.
type Lender interface {
	Check(authorizationID string) (oauth.Binding, error)
	// APIHosts are where the authorization's token may be sent.
	APIHosts(authorizationID string) ([]target.HostPattern, error)
	Acquire(ctx context.Context, authorizationID, op string) (*oauth.Lease, error)
	Subscribe(fn func(oauth.Event)) (cancel func())
}

// onAPIHost reports whether u is on one of authorization id's API hosts.
func (g *Gateway) onAPIHost(id string, u target.URL) bool {
	hosts, err := g.oauth.APIHosts(id)
	return err == nil && target.AnyMatches(hosts, u)
}

// operationTools lists the named operations as MCP tools. Each takes only
// its parameters; nothing in it names a token, endpoint or scope.
func (g *Gateway) operationTools() []*mcp.Tool {
	if g.ops == nil {
		return nil
	}
	ops := g.ops.List()
	out := make([]*mcp.Tool, 0, len(ops))
	for _, o := range ops {
		desc := o.Description
		if desc == "" {
			desc = fmt.Sprintf("%s %s", o.Method, o.URLTemplate)
		}
		title := o.Description
		if title == "" {
			title = o.Name
		}
		out = append(out, &mcp.Tool{
			Name:  operation.ToolName(o.Name),
			Title: title,
			Description: desc + ". Performed by Yett with an account a person connected; you supply the parameters only. " +
				"Give each logical action an idempotency_key and check it with yett.status after a disconnect.",
			InputSchema:  o.InputSchema(),
			OutputSchema: httpOutputSchema,
			Annotations:  operationAnnotations(o, title),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// operationsChanged re-lists the operations on every connection.
func (g *Gateway) operationsChanged() {
	g.mu.Lock()
	conns := make([]*conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	unlocked := g.unlocked
	g.mu.Unlock()
	ops := g.catalogue(unlocked)
	for _, c := range conns {
		c.syncOperations(ops)
	}
}

// catalogue is the operation tools and the upstream servers' tools to
// list: none while the vault is locked. Callers read it once and hand it
// to every connection. An upstream tool never takes the name of a
// built-in tool or an operation.
func (g *Gateway) catalogue(unlocked bool) []*mcp.Tool {
	if !unlocked {
		return nil
	}
	ops := g.operationTools()
	if g.upstream == nil {
		return ops
	}
	taken := map[string]bool{agentapi.ToolStatus: true}
	for _, name := range unlockedTools {
		taken[name] = true
	}
	for _, t := range ops {
		taken[t.Name] = true
	}
	all := append(ops, g.upstreamTools(taken)...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// isOperation says whether a tool name is a named operation's.
func (g *Gateway) isOperation(name string) bool {
	if g.ops == nil {
		return false
	}
	_, ok := g.ops.LookupTool(name)
	return ok
}

// dynamicTool is the handler of a listed operation or upstream tool (the
// routing middleware reaches the pipelines first; this is the same
// choice for a call the SDK's table would serve).
func (c *conn) dynamicTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !c.g.isOperation(req.Params.Name) && c.g.upstream != nil {
		return c.upstreamCall(ctx, req)
	}
	return c.operation(ctx, req)
}

// authorizationDisabled ends every session: a session covers every
// operation, so every one of them could have used the authorization.
func (g *Gateway) authorizationDisabled(id string) {
	for _, s := range g.broker.Sessions() {
		g.broker.Revoke(s.ID)
	}
	g.log.Info("an authorization was disabled; its sessions ended", "authorization", id)
}

// syncOperations makes the connection's operation tools match tools (the
// catalogue; none while the vault is locked).
func (c *conn) syncOperations(tools []*mcp.Tool) {
	// Only a real change of the catalogue reaches the agents: every AddTool
	// sends them notifications/tools/list_changed, and the manager reports
	// changes (a refresh, an inventory edit) that leave the tools as they are.
	sig := toolsSignature(tools)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opTools != nil && sig == c.opSig {
		return
	}
	c.opSig = sig
	want := map[string]bool{}
	for _, t := range tools {
		want[t.Name] = true
		c.server.AddTool(t, c.dynamicTool)
	}
	var gone []string
	for name := range c.opTools {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		c.server.RemoveTools(gone...)
	}
	c.opTools = want
}

// operation is the decision pipeline of a named operation: the same steps
// as http.request, with the authorization's local state checked before
// anything else happens and the access token acquired (refreshed if need
// be) only after the call was approved and recorded.
func (c *conn) operation(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := c.g
	// The tool of a long name is a shortened one (operation.ToolName).
	var op operation.Operation
	ok := false
	if g.ops != nil {
		op, ok = g.ops.LookupTool(req.Params.Name)
	}
	name := req.Params.Name
	if ok {
		name = op.Name
	}
	act := &audit.Action{Channel: ChannelOAuth, Operation: name}
	if g.vault.Status().State != vault.StateUnlocked {
		act.IdempotencyRef = lockedKey(req.Params.Arguments)
		return g.refuse(c, act, "", refusedLocked), nil
	}
	if g.ops == nil {
		return g.refuse(c, act, "", &refusal{agentapi.CodeUnknownOperation, audit.ReasonInvalidRequest, "no such operation"}), nil
	}
	if !ok {
		return g.refuse(c, act, "", &refusal{agentapi.CodeUnknownOperation, audit.ReasonInvalidRequest, "no such operation; the person defines operations in Yett"}), nil
	}
	act.CredentialRef = op.AuthorizationID
	call, err := op.Render(req.Params.Arguments)
	if err != nil {
		text := "invalid arguments"
		var ae *operation.ArgError
		if errors.As(err, &ae) {
			text = ae.Msg
		}
		return g.refuse(c, act, "", &refusal{agentapi.CodeInvalid, audit.ReasonInvalidRequest, text}), nil
	}
	act.Target, act.IdempotencyRef = call.Host, call.Key
	// The token goes only to the authorization's own API hosts: checked at
	// save, and again here, from the URL this call would be sent to.
	if u, err := target.Parse(call.URL); err != nil || !g.onAPIHost(op.AuthorizationID, u) {
		return g.refuse(c, act, "", &refusal{agentapi.CodeInvalid, audit.ReasonPolicy,
			"this operation's URL is not on its account's API hosts, so Yett will not send that account's token there; the person corrects the operation in Yett"}), nil
	}
	// The authorization's state is local: a revoked, disabled or
	// needs-reconnection authorization is refused here, before any approval
	// and without any network call.
	b, err := g.oauth.Check(op.AuthorizationID)
	if err != nil {
		return g.refuse(c, act, "", oauthRefusal(err, "this operation")), nil
	}
	if r := g.control(op.AuthorizationID); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	if r := c.checkIdentity(); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// The cards name the operation, what it does and the account, the
	// session card as well as a per-call one.
	card := approval.Call{
		Channel: ChannelOAuth, Method: op.Method, Target: name + " " + call.Host + call.Path,
		Credential: fmt.Sprintf("%s (%s, %s)", b.Name, b.AccountRef, b.Environment),
		Ref:        approval.OperationRef(name), Operation: name, Description: op.Description,
	}
	first := card
	first.Target = call.Host
	sess, r := c.session(ctx, act, &first)
	if r != nil {
		return g.refuse(c, act, "", r), nil
	}
	opReq := action.Request{Method: call.Method, URL: call.URL, Body: call.Body, Headers: bodyHeaders(call.Body)}
	var via *audit.Via
	if op.AsksEachCall() {
		card.Join = joinOf(call.Key, httpDigest(name, opReq))
		v, err := g.askCall(ctx, sess, card)
		if err != nil {
			return g.refuse(c, act, sess.ID, approvalRefusal(err)), nil
		}
		via = v.Audit()
	}
	return g.send(ctx, c, &outgoing{
		req:  opReq,
		host: call.Host, path: call.Path, key: call.Key, credRef: op.AuthorizationID, operation: name, approvedVia: via,
		credential: func(ctx context.Context) (*action.Credential, func(int), *refusal) {
			lease, err := g.oauth.Acquire(ctx, op.AuthorizationID, name)
			if err != nil {
				return nil, nil, oauthRefusal(err, "this operation")
			}
			cred := lease.Credential()
			// The token is lent only while the vault stays in the epoch the
			// call was approved in, as a vault secret is.
			cred.Secret = epochSecret{v: g.vault, epoch: sess.VaultEpoch, src: cred.Secret}
			return cred, func(status int) {
				if status == 401 {
					lease.Invalidate()
				}
				lease.Release(status != 0)
			}, nil
		},
	}, sess, act), nil
}

// lockedKey is the idempotency key a call refused at the vault gate named,
// when it is well formed, for the audit log; nothing else of it is read.
func lockedKey(raw json.RawMessage) string {
	var a struct {
		IdempotencyKey string `json:"idempotency_key"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	return auditableKey(a.IdempotencyKey)
}

func bodyHeaders(body []byte) map[string]string {
	if body == nil {
		return nil
	}
	return map[string]string{"Content-Type": "application/json"}
}

// oauthRefusal maps an authorization that cannot serve to the agent's
// answer. Every one of them means nothing was sent. what names what the
// account is behind ("this operation", "the MCP server \"x\"").
func oauthRefusal(err error, what string) *refusal {
	switch {
	case errors.Is(err, oauth.ErrNeedsReconnection):
		return &refusal{agentapi.CodeNeedsReconnection, audit.ReasonNeedsReconnection,
			"the account behind " + what + " must be reconnected by its owner in Yett; nothing was sent"}
	case errors.Is(err, oauth.ErrSuspended):
		return &refusal{agentapi.CodeAuthSuspended, audit.ReasonAuthorizationSuspended,
			"the account behind " + what + " is switched off in Yett for now (a revocation drill, or its owner); nothing was sent"}
	case errors.Is(err, oauth.ErrDisabled), errors.Is(err, oauth.ErrNotFound):
		return &refusal{agentapi.CodeAuthRevoked, audit.ReasonRevoked,
			"the account behind " + what + " was revoked or removed in Yett; nothing was sent"}
	case errors.Is(err, vault.ErrLocked):
		return refusedLocked
	case errors.Is(err, oauth.ErrTransient):
		return &refusal{agentapi.CodeUnavailable, audit.ReasonProviderUnreachable,
			"Yett could not renew access with the provider; nothing was sent. " + agentapi.CodeRetrySafe}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return refusedCancelled
	}
	return &refusal{agentapi.CodeUnavailable, audit.ReasonProviderRefused,
		"Yett could not get access for " + what + " from the provider; nothing was sent"}
}

func toolsSignature(tools []*mcp.Tool) string {
	h := sha256.New()
	for _, t := range tools {
		schema, _ := json.Marshal(t.InputSchema)
		hints, _ := json.Marshal(t.Annotations)
		fmt.Fprintf(h, "%q %q %s %s\n", t.Name, t.Description, schema, hints)
	}
	return hex.EncodeToString(h.Sum(nil))
}
