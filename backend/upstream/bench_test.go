//go:build unix

package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/vault"
)

// BenchmarkManagerCallVsDirect: one echo through the manager (its session
// with the server, the redaction of the result and the cap) against the
// same call on a direct Go SDK session with another server-everything,
// alternating the two: what Yett's client side adds, without the gateway.
func BenchmarkManagerCallVsDirect(b *testing.B) {
	v := newVault(b)
	m := newManager(b, v, Config{})
	addEverything(b, v, vault.MCPServerSettings{})
	echo := waitTool(b, m, "everything.echo")
	command, args := everything(b)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	direct, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(command, args...)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	var viaM, dir []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		msg := fmt.Sprintf(`{"message":"bench %d"}`, i)
		t0 := time.Now()
		if r, err := m.Call(context.Background(), echo, json.RawMessage(msg)); err != nil || r.Result.IsError {
			b.Fatalf("manager: %v", err)
		}
		viaM = append(viaM, time.Since(t0))
		t0 = time.Now()
		if r, err := direct.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(msg)}); err != nil || r.IsError {
			b.Fatalf("direct: %v", err)
		}
		dir = append(dir, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(viaM, .5).Microseconds()), "manager-p50-µs")
	b.ReportMetric(float64(percentile(dir, .5).Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(percentile(viaM, .5))/float64(percentile(dir, .5)), "p50-ratio")
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}
