package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/jsonw"
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
	seen     seenClient // read goroutine only
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
	call, ok := readFastCall(req.Params, init, &c.fast.seen)
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
// of a frame the policy point accepted: valid JSON, no key twice. seen
// keeps, for one connection, the newer protocol's client facts last found
// sound, which a client sends the same on every call.
func readFastCall(raw json.RawMessage, init *mcp.InitializeParams, seen *seenClient) (fastCall, bool) {
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
	// Of _meta the pipelines read only the progress token; the newer
	// protocol's facts decide whether the fast path may answer.
	var version, caps, client, token json.RawMessage
	if toolargs.ValidMembers(metaRaw, func(k string, v json.RawMessage) error {
		switch k {
		case "progressToken":
			token = v
		case mcp.MetaKeyProtocolVersion:
			version = v
		case mcp.MetaKeyClientCapabilities:
			caps = v
		case mcp.MetaKeyClientInfo:
			client = v
		}
		return nil
	}) != nil {
		return fastCall{}, false
	}
	if token != nil {
		var t any
		if json.Unmarshal(token, &t) != nil {
			return fastCall{}, false
		}
		p.Meta = mcp.Meta{"progressToken": t}
	}
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
	if v != init.ProtocolVersion {
		return fastCall{}, false
	}
	info, ok := seen.check(caps, client)
	if !ok {
		return fastCall{}, false
	}
	if info != nil {
		call.client = info
	}
	call.newProtocol = true
	return call, true
}

// seenClient is the newer protocol's client capabilities and client info
// last found sound on a connection (only its read goroutine uses it).
type seenClient struct {
	caps, client []byte
	info         *mcp.Implementation
}

// check reports whether caps and client are what the SDK accepts: the
// capabilities an object it can read, the client absent or an object with
// a string name and version. It returns the client they name, if any.
func (s *seenClient) check(caps, client json.RawMessage) (*mcp.Implementation, bool) {
	if s != nil && s.caps != nil && bytes.Equal(caps, s.caps) && bytes.Equal(client, s.client) {
		return s.info, true
	}
	var c mcp.ClientCapabilities
	if firstNonSpace(caps) != '{' || json.Unmarshal(caps, &c) != nil {
		return nil, false
	}
	var info *mcp.Implementation
	if client != nil && string(client) != "null" {
		info = &mcp.Implementation{}
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
			return nil, false
		}
	}
	if s != nil {
		s.caps, s.client, s.info = bytes.Clone(caps), bytes.Clone(client), info
	}
	return info, true
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
// (SEP-2575: servers name themselves in each result). The answers of
// Yett's own tools, one text and their structured outcome, are written by
// hand (writeToolAnswer); any other goes through encoding/json.
func encodeCallResult(res *mcp.CallToolResult, newProtocol bool) ([]byte, error) {
	if res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no result"}
	}
	if b, ok := writeToolAnswer(res, newProtocol); ok {
		return b, nil
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

// serverInfoMeta is the newer protocol's _meta of a result, encoded once.
var serverInfoMeta = func() []byte {
	b, err := json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: serverImpl})
	if err != nil {
		panic(err)
	}
	return b
}()

// writeToolAnswer writes res by hand when it has the shape of Yett's own
// answers (toolAnswer, toolText): no _meta of its own, one text without
// annotations, and structured content that encoding/json would copy as it
// is (compact, nothing it escapes). The bytes are the SDK's
// (TestFastPathAnswersAsTheSDK, FuzzWriteToolAnswer).
func writeToolAnswer(res *mcp.CallToolResult, newProtocol bool) ([]byte, bool) {
	if len(res.Meta) != 0 || res.InputRequests != nil || res.RequestState != "" || len(res.Content) != 1 {
		return nil, false
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || text.Meta != nil || text.Annotations != nil {
		return nil, false
	}
	var structured json.RawMessage
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if !copiedAsIs(sc) {
			return nil, false
		}
		structured = sc
	default:
		return nil, false
	}
	b := make([]byte, 0, 2*len(text.Text)+len(structured)+len(serverInfoMeta)+64)
	b = append(b, '{')
	if newProtocol {
		b = append(b, `"_meta":`...)
		b = append(b, serverInfoMeta...)
		b = append(b, ',')
	}
	b = append(b, `"content":[{"type":"text","text":`...)
	b = jsonw.AppendString(b, text.Text)
	b = append(b, "}]"...)
	if structured != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, structured...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}

// copiedAsIs reports whether encoding/json would copy raw unchanged into
// its output: valid, with no white space outside strings and nothing in a
// string it escapes for HTML (<, >, &, U+2028, U+2029).
func copiedAsIs(raw json.RawMessage) bool {
	if len(raw) == 0 || !json.Valid(raw) {
		return false
	}
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			return false
		}
	}
	return true
}
