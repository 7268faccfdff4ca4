package gateway

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/rpcframe"
	"github.com/yettdev/yett/backend/toolargs"
)

// The fast path: a tools/call of a tool Yett serves itself goes from the
// policy point (rpcframe, which has already checked and parsed the frame)
// straight to its pipeline, on a goroutine of its own, and its answer is
// written back on the connection. The SDK would decode the frame a second
// time, then its parameters a third and fourth (each with a fresh 32 KiB
// buffer: most of the garbage a call left behind) and hand the call across
// three goroutines; that was a third of the gateway's CPU per call.
//
// The SDK still serves everything else: initialize, tools/list,
// notifications, a tool only its own table knows, and every call the fast
// path cannot be sure to answer exactly as the SDK would (before the
// session is initialized, parameters it cannot read, a newer protocol's
// _meta that differs from the session's). Those reach the SDK unchanged.
// TestFastPathAnswersAsTheSDK holds the two paths to the same answers.

// fastCalls are the calls the fast path took and has not answered.
type fastCalls struct {
	mu       sync.Mutex
	inflight map[any]context.CancelFunc // by the JSON-RPC id's value
	wg       sync.WaitGroup
}

func (f *fastCalls) add(id any, cancel context.CancelFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inflight == nil {
		f.inflight = map[any]context.CancelFunc{}
	}
	f.inflight[id] = cancel
	f.wg.Add(1)
}

func (f *fastCalls) done(id any) {
	f.mu.Lock()
	delete(f.inflight, id)
	f.mu.Unlock()
	f.wg.Done()
}

// cancel cancels the call id and reports whether it was one of these.
func (f *fastCalls) cancel(id any) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.inflight[id]
	if ok {
		c()
	}
	return ok
}

// cancelAll cancels every call taken, as the connection ends, and waits
// until each has answered (or failed to, on the closed connection).
func (f *fastCalls) cancelAll() {
	f.mu.Lock()
	for _, c := range f.inflight {
		c()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// newProtocol is the first protocol version whose calls carry their
// client's facts in _meta (SEP-2575); the SDK reads older ones from the
// session.
const newProtocol = "2026-07-28"

// divert is the connection's rpcframe.Transport.Divert: it takes a
// tools/call the fast path can answer, and a cancellation of a call it took.
func (c *conn) divert(rc *rpcframe.Connection, req *jsonrpc.Request) bool {
	if c.g.sdkOnly {
		return false
	}
	if !req.IsCall() {
		return req.Method == "notifications/cancelled" && c.cancelFast(req.Params)
	}
	if req.Method != "tools/call" {
		return false
	}
	ss := c.ss.Load()
	if ss == nil {
		return false
	}
	init := ss.InitializeParams()
	if init == nil {
		return false
	}
	call, ok := readFastCall(req.Params, init)
	if !ok {
		return false
	}
	h := c.route(call.req.Params.Name)
	if h == nil {
		return false
	}
	call.req.Session = ss
	ctx, cancel := context.WithCancel(c.ctx)
	id := req.ID
	c.fast.add(id.Raw(), cancel)
	c.g.fastServed.Add(1)
	go func() {
		defer c.fast.done(id.Raw())
		defer cancel()
		res, err := c.serveCall(ctx, call.req, h, call.client)
		if err != nil {
			rc.RespondError(id, err)
			return
		}
		b, err := encodeCallResult(res, call.newProtocol)
		if err != nil {
			rc.RespondError(id, err)
			return
		}
		rc.Respond(id, b)
	}()
	return true
}

// cancelFast cancels a call the fast path took, for a
// notifications/cancelled naming it; any other goes to the SDK.
func (c *conn) cancelFast(params json.RawMessage) bool {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return false
	}
	return c.fast.cancel(id.Raw())
}

// fastCall is a tools/call as the fast path read it.
type fastCall struct {
	req         *mcp.CallToolRequest
	client      *mcp.Implementation // who the client says it is, for the clients book
	newProtocol bool                // its _meta names a protocol from newProtocol on
}

// readFastCall reads a tools/call's parameters by their exact keys, as the
// SDK does, and reports false for anything the SDK would answer otherwise
// than the pipeline (an error of its own) or read differently. raw is part
// of a frame the policy point accepted: valid JSON, no key twice.
func readFastCall(raw json.RawMessage, init *mcp.InitializeParams) (fastCall, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return fastCall{}, false
	}
	var name, metaRaw json.RawMessage
	p := &mcp.CallToolParamsRaw{}
	err := toolargs.ValidMembers(raw, func(k string, v json.RawMessage) error {
		switch k {
		case "name":
			name = v
		case "arguments":
			p.Arguments = v
		case "_meta":
			metaRaw = v
		}
		return nil
	})
	if err != nil || json.Unmarshal(name, &p.Name) != nil {
		return fastCall{}, false
	}
	call := fastCall{req: &mcp.CallToolRequest{Params: p}, client: init.ClientInfo}
	if metaRaw == nil || string(metaRaw) == "null" {
		return call, true
	}
	if firstNonSpace(metaRaw) != '{' || json.Unmarshal(metaRaw, &p.Meta) != nil {
		return fastCall{}, false
	}
	var version, caps, client json.RawMessage
	toolargs.ValidMembers(metaRaw, func(k string, v json.RawMessage) error {
		switch k {
		case mcp.MetaKeyProtocolVersion:
			version = v
		case mcp.MetaKeyClientCapabilities:
			caps = v
		case mcp.MetaKeyClientInfo:
			client = v
		}
		return nil
	})
	if version == nil {
		return call, true
	}
	var v string
	if json.Unmarshal(version, &v) != nil {
		return fastCall{}, false
	}
	if v < newProtocol {
		return call, true
	}
	// A call of the newer protocol: served here only under the version
	// the session runs (the SDK checked it when the session began), with
	// the capabilities that protocol requires and a readable client.
	var c mcp.ClientCapabilities
	if v != init.ProtocolVersion || firstNonSpace(caps) != '{' || json.Unmarshal(caps, &c) != nil {
		return fastCall{}, false
	}
	if client != nil && string(client) != "null" {
		info := &mcp.Implementation{}
		err := toolargs.ValidMembers(client, func(k string, v json.RawMessage) error {
			switch k {
			case "name":
				return json.Unmarshal(v, &info.Name)
			case "version":
				return json.Unmarshal(v, &info.Version)
			}
			return nil
		})
		if err != nil {
			return fastCall{}, false
		}
		call.client = info
	}
	call.newProtocol = true
	return call, true
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c
		}
	}
	return 0
}

// encodeCallResult encodes a pipeline's answer as the SDK would send it: a
// call of the newer protocol gets the server's name in the result's _meta
// (SEP-2575: servers name themselves in each result).
func encodeCallResult(res *mcp.CallToolResult, newProtocol bool) ([]byte, error) {
	if res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no result"}
	}
	if _, ok := res.Meta[mcp.MetaKeyServerInfo]; newProtocol && !ok {
		m := mcp.Meta{mcp.MetaKeyServerInfo: serverImpl}
		for k, v := range res.Meta {
			m[k] = v
		}
		res.Meta = m
	}
	return json.Marshal(res)
}
