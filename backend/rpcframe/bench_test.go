package rpcframe

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var benchFrame = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"http.request","arguments":{"method":"POST","url":"https://api.example.com/v1/issues","headers":{"Accept":"application/json"},"body":"` + strings.Repeat("lorem ipsum ", 80) + `"}}}`)

// BenchmarkParse is the policy point's cost per message; BenchmarkSDKDecode
// is the SDK's own decoding of the same frame, the baseline it adds to.
func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(benchFrame)))
	for b.Loop() {
		if _, rej := Parse(benchFrame, Limits{}); rej != nil {
			b.Fatal(rej.Reason)
		}
	}
}

func BenchmarkSDKDecode(b *testing.B) {
	b.SetBytes(int64(len(benchFrame)))
	for b.Loop() {
		if _, err := jsonrpc.DecodeMessage(benchFrame); err != nil {
			b.Fatal(err)
		}
	}
}
