package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/upstream"
)

// FuzzUpstreamArgs: an agent's arguments for an upstream tool never panic
// the parser; what it accepts is one JSON object, re-encoded the same way
// every time (so the card, the digest and the server see one thing),
// without the idempotency key Yett added to the schema.
func FuzzUpstreamArgs(f *testing.F) {
	tool := upstream.Tool{Name: "s.t", Upstream: "t", Listed: &mcp.Tool{InputSchema: map[string]any{"type": "object"}}}
	for _, s := range []string{`{}`, `null`, ``, `{"a":1,"idempotency_key":"k-1"}`, `{"a":1,"a":2}`, `[1]`, `{"idempotency_key":5}`, `{"b":{"c":[1,2]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, key, err := upstreamArgs(tool, raw)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(args, &obj) != nil || obj == nil {
			t.Fatalf("accepted %q as %q, not an object", raw, args)
		}
		if _, ok := obj[keyArg]; ok {
			t.Fatalf("the idempotency key reached the server: %s", args)
		}
		again, key2, err := upstreamArgs(tool, args)
		if err != nil || !bytes.Equal(again, args) || (key2 != "" && key2 != key) {
			t.Fatalf("not stable: %q -> %q -> %q (%v)", raw, args, again, err)
		}
	})
}
