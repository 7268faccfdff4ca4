//go:build unix

package gateway

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/toolargs"
	"github.com/yettdev/yett/backend/vault"
)

// dynamic are the parts of an answer that differ from one call to the
// next whatever path answered it: ids, times, durations, digests, entry
// numbers.
var dynamic = regexp.MustCompile(`(q|yk|s|r)-[A-Za-z0-9_-]{6,}|\d{4}-\d\d-\d\dT[0-9:.]+Z|"(duration_ms|audit_entry|entry|elapsed_ms)":\d+|[0-9a-f]{64}|pid \d+|127\.0\.0\.1:\d+|\[\\?"\w{3}, \d\d \w{3} \d{4} [0-9:]+ GMT\\?"\]`)

// answersOf sends each line (tools/call frames with ids 10, 11, ...) to a
// gateway through a raw shim, approving the session card the first call
// raises, and returns each answer with its dynamic parts masked.
func answersOf(t *testing.T, sdkOnly, newProtocol bool, lines func(w *world) []string) ([]string, int64) {
	t.Helper()
	return answersIn(t, newWorld(t, worldOpts{}), sdkOnly, newProtocol, lines)
}

// answersIn is answersOf in a world the caller made.
func answersIn(t *testing.T, w *world, sdkOnly, newProtocol bool, lines func(w *world) []string) ([]string, int64) {
	t.Helper()
	w.gw.sdkOnly = sdkOnly
	s := startRawShim(t, w.runDir)
	if !newProtocol {
		s.initialize()
	}
	var out []string
	for i, l := range lines(w) {
		s.send(l)
		if i == 0 {
			w.approveNext()
		}
		r := s.next()
		for r["method"] != nil { // a progress notice of a waiting call
			r = s.next()
		}
		delete(r, "jsonrpc")
		b, _ := json.Marshal(r)
		out = append(out, dynamic.ReplaceAllString(string(b), "…"))
	}
	return out, w.gw.fastServed.Load()
}

// callFrame returns a maker of tools/call frames; under the newer protocol
// each carries the client's facts in its _meta.
func callFrame(newProtocol bool) func(id int, name, args string) string {
	m := ""
	if newProtocol {
		m = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"progressToken":"p1"}`
	}
	return func(id int, name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, id, name, args, m)
	}
}

// sameAnswers checks that the SDK-only gateway took no call on the fast
// path, the other took every call but notTaken (and, under the newer
// protocol, the first, which begins the session in the SDK), and both
// answered each call alike.
func sameAnswers(t *testing.T, newProtocol bool, sdk, fast []string, sdkFast, served int64, notTaken int) {
	t.Helper()
	if sdkFast != 0 {
		t.Fatalf("the SDK-only gateway took %d calls on the fast path", sdkFast)
	}
	want := int64(len(fast) - notTaken)
	if newProtocol {
		want--
	}
	if served != want {
		t.Fatalf("the fast path took %d calls, want %d", served, want)
	}
	for i := range sdk {
		if sdk[i] != fast[i] {
			t.Errorf("call %d answered differently\n  sdk:  %s\n  fast: %s", 10+i, sdk[i], fast[i])
		}
	}
}

// The fast path answers every call as the SDK does: the same JSON, key for
// key, for a call that goes through, a refusal, bad arguments, a status
// query and a tool no one serves, under the protocol of an initialized
// session and under the newer one whose calls carry the client in _meta.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	for _, newProtocol := range []bool{false, true} {
		t.Run(fmt.Sprintf("newProtocol=%v", newProtocol), func(t *testing.T) {
			lines := func(w *world) []string {
				call := callFrame(newProtocol)
				req, _ := json.Marshal(w.req("conformance"))
				other := strings.Replace(string(req), "conformance", "conformance-2", -1)
				return []string{
					call(10, "http.request", string(req)),
					call(11, "http.request", other),
					call(12, "http.request", string(req)), // the same key again: the first call's result
					call(13, "http.request", `{"method":"POST"}`),
					call(14, "http.request", `{"method":"POST","method":"GET"}`),
					call(15, "yett.status", `{"idempotency_key":"key-conformance"}`),
					call(16, "yett.status", `{"idempotency_key":"never-used"}`),
					call(17, "no.such_tool", `{}`),
					call(18, "http.get", `{"url":"http://127.0.0.1:1/x"}`),
				}
			}
			sdk, sdkFast := answersOf(t, true, newProtocol, lines)
			fast, served := answersOf(t, false, newProtocol, lines)
			// Every call but the one the policy point refuses (a key twice)
			// and the unknown tool.
			sameAnswers(t, newProtocol, sdk, fast, sdkFast, served, 2)
		})
	}
}

// The fast path takes the calls of upstream servers' tools too (route
// names their pipeline), and answers them as the SDK does: a server's
// content of every kind (text with characters JSON escapes, an image,
// annotations, structured content), the server's own error, a tool the
// server does not list, and refusals of bad arguments, under both
// protocols.
func TestFastPathAnswersUpstreamAsTheSDK(t *testing.T) {
	session := map[string]vault.Approval{}
	for _, n := range []string{"echo", "get-sum", "get-tiny-image", "get-annotated-message", "get-structured-content"} {
		session[n] = vault.ApprovalSession
	}
	// The audit entry a result names is its number in the log, which
	// depends on when the server's start was recorded.
	entry := regexp.MustCompile(`audit entry \d+`)
	for _, newProtocol := range []bool{false, true} {
		t.Run(fmt.Sprintf("newProtocol=%v", newProtocol), func(t *testing.T) {
			lines := func(w *world) []string {
				call := callFrame(newProtocol)
				return []string{
					call(10, "everything.echo", `{"message":"<b>&amp; \"quoted\" \u2028 é ✓","idempotency_key":"fast-up-1"}`),
					call(11, "everything.get-sum", `{"a":1.5,"b":2}`),
					call(12, "everything.get-tiny-image", `{}`),
					call(13, "everything.get-annotated-message", `{"messageType":"error","includeImage":true}`),
					call(14, "everything.get-structured-content", `{"location":"Chicago"}`),
					call(15, "everything.echo", `{}`),                                                // the server refuses its arguments
					call(16, "everything.echo", `[1]`),                                               // not an object: refused before it leaves
					call(17, "everything.echo", `{"idempotency_key":7}`),                             // a key that is not a string
					call(18, "everything.no-such-tool", `{}`),                                        // a tool the server does not list
					call(19, "everything.echo", `{"message":"again","idempotency_key":"fast-up-1"}`), // a key used before
					call(20, "yett.status", `{"idempotency_key":"fast-up-1"}`),
				}
			}
			run := func(sdkOnly bool) ([]string, int64) {
				w := newWorld(t, worldOpts{upstream: true})
				addEverything(t, w, session)
				waitLookup(t, w, "everything.get-structured-content")
				out, n := answersIn(t, w, sdkOnly, newProtocol, lines)
				for i := range out {
					out[i] = entry.ReplaceAllString(out[i], "audit entry …")
				}
				return out, n
			}
			sdk, sdkFast := run(true)
			fast, served := run(false)
			sameAnswers(t, newProtocol, sdk, fast, sdkFast, served, 0)
			for i, want := range map[int]string{0: `\u003cb\u003e\u0026amp;`, 2: `"type":"image"`, 3: `"annotations"`, 4: `"structuredContent"`} {
				if !strings.Contains(fast[i], want) {
					t.Errorf("call %d lacks %s: %s", 10+i, want, fast[i])
				}
			}
		})
	}
}

// FuzzReadFastCall: any parameters of a well-formed frame read as a call
// whose name and arguments are exactly the members spelled "name" and
// "arguments", or are left to the SDK; nothing panics.
func FuzzReadFastCall(f *testing.F) {
	for _, s := range []string{
		`{"name":"http.request","arguments":{"url":"x"}}`,
		`{"name":"yett.status","arguments":{},"_meta":{"progressToken":1}}`,
		`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}`,
		`{"NAME":"http.request"}`, `{"name":1}`, `null`, `[]`, `{"name":"a","_meta":[]}`,
	} {
		f.Add([]byte(s), "2026-07-28")
	}
	f.Fuzz(func(t *testing.T, raw []byte, version string) {
		if !json.Valid(raw) {
			return // the policy point refuses the frame first
		}
		init := &mcp.InitializeParams{ProtocolVersion: version, ClientInfo: &mcp.Implementation{Name: "init"}}
		call, ok := readFastCall(raw, init, &seenClient{})
		if !ok {
			return
		}
		members, err := toolargs.Object(raw)
		if err != nil {
			return // a key twice: the policy point refuses the frame
		}
		var name string
		if json.Unmarshal(members["name"], &name) != nil || name != call.req.Params.Name {
			t.Fatalf("%q read as the call of %q", raw, call.req.Params.Name)
		}
		if string(members["arguments"]) != string(call.req.Params.Arguments) {
			t.Fatalf("%q read with arguments %q", raw, call.req.Params.Arguments)
		}
		if call.client == nil && !call.newProtocol {
			t.Fatalf("%q: no client", raw)
		}
	})
}

// FuzzWriteToolAnswer: where writeToolAnswer writes an answer, its bytes
// are the ones encoding/json writes for it through the SDK's types.
func FuzzWriteToolAnswer(f *testing.F) {
	f.Add("COMPLETED status=200", []byte(`{"outcome":"COMPLETED","status":200}`), false, false)
	f.Add("<b>&\u2028\"\n", []byte(`{"a":"\u003c"}`), true, true)
	f.Add("", []byte(`{"a": 1}`), false, true)
	f.Add("x", []byte(`{"a":"<"}`), false, false)
	f.Fuzz(func(t *testing.T, text string, structured []byte, isError, newProtocol bool) {
		res := &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		if len(structured) > 0 {
			if !json.Valid(structured) {
				return
			}
			res.StructuredContent = json.RawMessage(structured)
		}
		got, ok := writeToolAnswer(res, newProtocol)
		if !ok {
			return
		}
		if newProtocol {
			res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: serverImpl}
		}
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("wrote\n %s\nthe SDK's types write\n %s", got, want)
		}
	})
}
