package gateway

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/procid"
	"github.com/yettdev/yett/backend/rpcframe"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/version"
)

// conn is one agent connection: one MCP server session, serving one run at
// a time (see checkIdentity for when the run is inspected again).
type conn struct {
	g      *Gateway
	nc     net.Conn
	bound  atomic.Pointer[boundRun]
	server *mcp.Server
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	httpTool  bool
	opTools   map[string]bool
	opSig     string
	closeOnce sync.Once
	// drill: Yett's own revocation drill client (drill.go), which the
	// pipelines stop where an agent's call would ask for approval.
	drill bool

	// ss is the SDK's session on this connection once it is made;
	// fast holds the calls the fast path took (fastcall.go).
	ss   atomic.Pointer[mcp.ServerSession]
	fast fastCalls
}

// boundRun is the run a connection serves: the process identified when it
// connected, or the same process inspected again after it changed what it
// runs (rebind). rec and id never change; a rebind swaps the whole value.
type boundRun struct {
	rec *procid.RunRecord
	id  string
}

// current is the run the connection serves now.
func (c *conn) current() *boundRun { return c.bound.Load() }

// serverImpl is who Yett says it is to every client.
var serverImpl = &mcp.Implementation{Name: "yett", Title: "Yett", Version: version.Number()}

// exitGrace is how long a closed connection waits to learn whether its
// process exited.
const exitGrace = 500 * time.Millisecond

func (g *Gateway) handle(nc net.Conn) {
	// identify asks the kernel first (CheckPeer, CheckPipeClient): another
	// user's peer is refused before a byte is read.
	run, err := identify(g.insp, nc)
	if err != nil {
		g.log.Warn("refused a connection", "reason", identifyReason(err))
		nc.Close()
		return
	}
	if !g.allowedShim(run) {
		run.Close()
		g.log.Warn("refused a connection", "reason", "not_yett_mcp", "peer_pid", run.ShimPID)
		nc.Close()
		return
	}
	g.serveConn(nc, run, false)
}

// serveConn serves one identified run's MCP session on nc until it ends,
// and closes run. drill marks Yett's own drill client (DrillConn).
func (g *Gateway) serveConn(nc net.Conn, run *procid.RunRecord, drill bool) {
	c := &conn{g: g, nc: nc, drill: drill}
	c.bound.Store(&boundRun{rec: run, id: approval.RunID(run)})
	defer func() {
		run.Close()
		c.current().rec.Close()
	}()
	c.ctx, c.cancel = context.WithCancel(g.ctx)
	defer c.cancel()
	c.server = mcp.NewServer(serverImpl, &mcp.ServerOptions{
		Instructions: "Yett performs HTTP actions for you with credentials you never see. A person approves each agent run.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	c.server.AddTool(statusTool(), c.status)
	c.server.AddReceivingMiddleware(c.routeCalls)

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		nc.Close()
		return
	}
	g.conns[c] = struct{}{}
	unlocked := g.unlocked
	g.mu.Unlock()
	c.setTools(unlocked, g.catalogue(unlocked))
	defer func() {
		g.mu.Lock()
		delete(g.conns, c)
		g.mu.Unlock()
	}()

	g.log.Info("agent connected", "run", c.current().id, "pid", run.PID, "exe", run.Name, "signer", run.Signer)
	exited := procid.WatchExit(c.ctx, run)
	go func() {
		<-exited
		if c.ctx.Err() == nil {
			g.broker.EndRun(c.current().id, audit.ReasonProcessExited)
			c.close()
		}
	}()

	t := &rpcframe.Transport{Conn: nc, Divert: c.divert, OnReject: func(r *rpcframe.Rejection) {
		// A refused frame is a refused call as far as the audit log is
		// concerned: a batch, a broken or oversized frame, an invalid
		// notification, a call beyond the connection's bound.
		reason, what := audit.ReasonFrameRejected, rejectReason(r.Reason)
		if errors.Is(r.Reason, rpcframe.ErrBusy) {
			reason = audit.ReasonBusy
		}
		g.denied(c, &audit.Action{Channel: "mcp", Operation: what}, "", reason)
	}}
	ss, err := c.server.Connect(c.ctx, t, nil)
	if err != nil {
		nc.Close()
		g.broker.EndRun(c.current().id, approval.ReasonConnectionClosed)
		return
	}
	c.ss.Store(ss)
	ss.Wait()
	// The calls the fast path took are cancelled when the connection
	// ends, as the SDK cancels its own, and end before the run is closed:
	// each holds the run's record until its outcome is recorded.
	c.fast.cancelAll()
	// An agent that dies closes its shim's stdin, so the connection often
	// ends a moment before the exit is seen: give the exit a short grace so
	// the recorded reason is the true one.
	reason := approval.ReasonConnectionClosed
	select {
	case <-exited:
		if c.ctx.Err() == nil {
			reason = audit.ReasonProcessExited
		}
	case <-time.After(exitGrace):
	}
	c.close()
	g.broker.EndRun(c.current().id, reason)
	g.log.Info("agent disconnected", "run", c.current().id, "reason", string(reason))
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.cancel()
		c.nc.Close()
	})
}

// unlockedTools are the built-in tools listed only while the vault is
// unlocked (yett.status always is).
var unlockedTools = []string{agentapi.ToolHTTPGet, agentapi.ToolHTTPRequest, agentapi.ToolSSHExec, agentapi.ToolRequestAccess}

// setTools lists http.get, http.request, ssh.exec and the operations (ops, from
// catalogue) only while the vault is unlocked; the SDK
// tells the client with notifications/tools/list_changed.
func (c *conn) setTools(unlocked bool, ops []*mcp.Tool) {
	c.syncOperations(ops)
	c.mu.Lock()
	defer c.mu.Unlock()
	if unlocked == c.httpTool {
		return
	}
	c.httpTool = unlocked
	if unlocked {
		c.server.AddTool(httpGetTool(), c.httpGet)
		c.server.AddTool(httpRequestTool(), c.httpRequest)
		c.server.AddTool(sshExecTool(), c.sshExec)
		c.server.AddTool(requestAccessTool(), c.requestAccess)
	} else {
		c.server.RemoveTools(unlockedTools...)
	}
}

func (g *Gateway) allowedShim(run *procid.RunRecord) bool {
	if len(g.cfg.ShimSHA256) == 0 {
		return true
	}
	for _, h := range g.cfg.ShimSHA256 {
		if h == run.ShimExeSHA256 {
			return true
		}
	}
	return false
}

// routeCalls sends every call of http.request, yett.status and a named
// operation to its pipeline whether or not the tool is listed at this
// moment: the pipeline's vault gate answers LOCKED, where the SDK's tool
// table, which lock and unlock change concurrently, would answer "unknown
// tool" to a call that raced the change. Most calls never come here: the
// fast path (fastcall.go) takes them from the policy point; this serves
// the ones it leaves to the SDK.
func (c *conn) routeCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctr, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || ctr.Params == nil {
			return next(ctx, method, req)
		}
		if h := c.route(ctr.Params.Name); h != nil {
			return c.serveCall(ctx, ctr, h, ctr.ClientInfo())
		}
		return next(ctx, method, req)
	}
}

// toolHandler answers one tools/call.
type toolHandler func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error)

// route returns the pipeline that answers a call of the tool name, or nil
// when the SDK's own tool table answers it (no tool Yett serves has that
// name).
func (c *conn) route(name string) toolHandler {
	switch {
	case name == agentapi.ToolHTTPRequest:
		return c.httpRequest
	case name == agentapi.ToolHTTPGet:
		return c.httpGet
	case name == agentapi.ToolSSHExec:
		return c.sshExec
	case name == agentapi.ToolStatus:
		return c.status
	case name == agentapi.ToolRequestAccess:
		return c.requestAccess
	case c.g.isOperation(name):
		return c.operation
	case c.g.upstream != nil && upstreamName.MatchString(name):
		// A tool of a server that is defined (listed now, or the server
		// is starting), or asked while the vault is locked (when no
		// server's tools are known, and the answer is LOCKED).
		server, _, _ := strings.Cut(name, ".")
		if _, defined := c.g.upstream.State(server); defined || c.g.vault.Status().State != vault.StateUnlocked {
			return c.upstreamCall
		}
	}
	return nil
}

// serveCall answers a call with its pipeline h, noting the client that
// made it (by the name it gave; it decides nothing) and carrying the call
// in ctx for its progress notices.
func (c *conn) serveCall(ctx context.Context, ctr *mcp.CallToolRequest, h toolHandler, client *mcp.Implementation) (*mcp.CallToolResult, error) {
	if !c.drill {
		run := c.current().rec
		c.g.clients.saw(client, run.Name, run.PID, time.Now())
	}
	return h(withCall(ctx, ctr), ctr)
}

// identifyReason is a short log token; the error itself may carry paths.
func identifyReason(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{
		{procid.ErrForeignUser, "foreign_user"}, {procid.ErrNoOrigin, "no_origin"},
		{procid.ErrProcessGone, "process_gone"}, {procid.ErrPeerChanged, "peer_changed"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return "identify_failed"
}

func rejectReason(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{
		{rpcframe.ErrBatch, "batch"}, {rpcframe.ErrFrameTooLarge, "too_large"}, {rpcframe.ErrTooDeep, "too_deep"},
		{rpcframe.ErrMalformed, "malformed"}, {rpcframe.ErrNotObject, "not_object"}, {rpcframe.ErrInvalidRequest, "invalid"},
		{rpcframe.ErrBusy, "busy"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return "rejected"
}
