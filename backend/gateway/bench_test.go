//go:build unix

package gateway

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
)

// autoApprove approves every session card (benchmarks only).
func autoApprove(w *world) func() {
	return w.gw.Broker().Subscribe(func(u approval.Update) {
		if !u.Pending {
			return
		}
		for _, r := range w.gw.Broker().Pending() {
			go w.gw.Broker().Answer(r.ID, true, "bench")
		}
	})
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

// BenchmarkApprovedCallVsDirect measures, in the same run, one approved
// http.request through `yett mcp` and the gateway (vault lookup, journal
// and audit fsyncs, credential injection) against a direct HTTP POST to the
// same loopback receiver, alternating the two.
func BenchmarkApprovedCallVsDirect(b *testing.B) {
	w := newWorld(b, worldOpts{})
	defer autoApprove(w)()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cmd := newShimCmd(w.runDir)
	s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	url := "http://" + w.recv.addr + "/bench"
	call := func(i int) {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: agentapi.ToolHTTPRequest, Arguments: map[string]any{
			"method": "POST", "url": url, "body": "x", "idempotency_key": fmt.Sprintf("bench-%d-%d", b.N, i),
		}})
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	call(-1) // the session approval is not part of the figure
	direct := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var gw, dir []time.Duration
	syncs := w.syncs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		call(i)
		gw = append(gw, time.Since(t0))
		t0 = time.Now()
		resp, err := direct.Post(url, "text/plain", bytes.NewReader([]byte("x")))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		dir = append(dir, time.Since(t0))
	}
	b.StopTimer()
	w.reportSyncs(b, syncs, b.N)
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
	b.ReportMetric(us(percentile(gw, .5)), "gw-p50-µs")
	b.ReportMetric(us(percentile(gw, .99)), "gw-p99-µs")
	b.ReportMetric(us(percentile(dir, .5)), "direct-p50-µs")
	b.ReportMetric(us(percentile(dir, .99)), "direct-p99-µs")
	b.ReportMetric(float64(percentile(gw, .5))/float64(percentile(dir, .5)), "p50-ratio")
	b.ReportMetric(float64(percentile(gw, .99))/float64(percentile(dir, .99)), "p99-ratio")
}

// BenchmarkNewConnection is what an agent pays to start: spawn `yett mcp`,
// the gateway's kernel identification of the origin (peer credentials,
// parent walk, executable hash from the cache) and the MCP handshake.
func BenchmarkNewConnection(b *testing.B) {
	w := newWorld(b, worldOpts{})
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: newShimCmd(w.runDir)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkConcurrentAgents16 runs 16 agent processes, each making calls
// back to back, and reports calls per second through one gateway.
func BenchmarkConcurrentAgents16(b *testing.B) {
	const agents = 16
	w := newWorld(b, worldOpts{})
	defer autoApprove(w)()
	as := make([]*agent, agents)
	for i := range as {
		as[i] = startAgent(b, w.runDir)
		as[i].connect()
	}
	per := b.N/agents + 1
	syncs := w.syncs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i, a := range as {
		wg.Add(1)
		go func(i int, a *agent) {
			defer wg.Done()
			req := w.req(fmt.Sprintf("conc-%d-%d", b.N, i))
			r := a.do(agentCmd{Op: "loop", Args: mustJSON(req), N: per})
			mu.Lock()
			failed += r.Failed
			mu.Unlock()
		}(i, a)
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if failed != 0 {
		b.Fatalf("%d calls failed", failed)
	}
	w.reportSyncs(b, syncs, per*agents)
	b.ReportMetric(float64(per*agents)/el.Seconds(), "calls/s")
}

// syncs is how many fsyncs the journal's log and the audit log made so far.
func (w *world) syncs() int64 { return w.gw.journal.Syncs() + w.audit.Syncs() }

// reportSyncs reports the fsyncs of both logs per call since before.
func (w *world) reportSyncs(b *testing.B, before int64, calls int) {
	b.ReportMetric(float64(w.syncs()-before)/float64(calls), "fsyncs/call")
}

func mustJSON(v any) []byte {
	b, _ := jsonMarshal(v)
	return b
}
