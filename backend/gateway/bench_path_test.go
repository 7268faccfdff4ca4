//go:build unix

package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/vault"
)

// quietTarget is the benchmarks' loopback API: it reads the request and
// answers a small JSON body, and keeps nothing (no fsync, no log), so the
// figures are Yett's cost and not the target's.
func quietTarget(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

type pathFigures struct {
	lat []time.Duration
}

func (f *pathFigures) p(q float64) time.Duration { return percentile(f.lat, q) }

// BenchmarkCallPath measures, in one run and against the same quiet
// loopback target: a direct request over a fresh connection and over a
// kept-alive one (the baselines), one approved http.request through the
// real `yett mcp` shim and the gateway, and the throughput of 16 agent
// processes against 16 direct clients. It reports the latencies and the
// ratios issue 10 sets targets for (Yett p50 at most 2x direct-fresh, p99
// at most 4x; 16 agents at least 2,500 calls/s and at least a quarter of
// direct-fresh throughput).
func BenchmarkCallPath(b *testing.B) {
	w := newWorld(b, worldOpts{})
	defer autoApprove(w)()
	target := quietTarget(b)
	if _, err := w.vault.Credentials().Add(vault.NewCredential{
		Name: "bench", Secret: vault.NewSecret([]byte(canary)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{target}, Approval: vault.ApprovalSession,
	}); err != nil {
		b.Fatal(err)
	}
	url := "http://" + target + "/bench"
	body := `{"n":1}`
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	kept := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	direct := func(c *http.Client) error {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+canary)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: newShimCmd(w.runDir)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var seq atomic.Int64
	viaYett := func() error {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: agentapi.ToolHTTPRequest, Arguments: map[string]any{
			"method": "POST", "url": url, "body": map[string]any{"n": 1},
			"idempotency_key": fmt.Sprintf("path-%d", seq.Add(1)),
		}})
		if err == nil && res.IsError {
			err = fmt.Errorf("%v", res.Content[0].(*mcp.TextContent).Text)
		}
		return err
	}
	if err := viaYett(); err != nil { // the session approval is not part of the figures
		b.Fatal(err)
	}

	// Latency: the three alternate, call by call, so load on the machine
	// falls on all of them alike.
	var dFresh, dKept, yett pathFigures
	n := max(b.N, 200)
	seqSyncs := w.syncs()
	b.ResetTimer()
	for i := 0; i < n; i++ {
		for _, m := range []struct {
			f   *pathFigures
			run func() error
		}{{&dFresh, func() error { return direct(fresh) }}, {&dKept, func() error { return direct(kept) }}, {&yett, viaYett}} {
			t0 := time.Now()
			if err := m.run(); err != nil {
				b.Fatal(err)
			}
			m.f.lat = append(m.f.lat, time.Since(t0))
		}
	}

	seqSyncs = w.syncs() - seqSyncs

	// Throughput: 16 direct clients (goroutines here) for a fixed time, then
	// 16 agent processes through their own shims.
	const agents = 16
	window := 3 * time.Second
	directRate := func(c *http.Client) float64 {
		var done atomic.Int64
		stop := time.Now().Add(window)
		var wg sync.WaitGroup
		for range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					if direct(c) == nil {
						done.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		return float64(done.Load()) / window.Seconds()
	}
	freshRate, keptRate := directRate(fresh), directRate(kept)
	as := make([]*agent, agents)
	for i := range as {
		as[i] = startAgent(b, w.runDir)
		as[i].connect()
	}
	per := max(n/2, 150)
	concSyncs := w.syncs()
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var failText atomic.Value
	for i, a := range as {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := a.do(agentCmd{Op: "rawloop", Tool: agentapi.ToolHTTPRequest, N: per, Args: mustJSON(map[string]any{
				"method": "POST", "url": url, "body": map[string]any{"n": 1}, "idempotency_key": fmt.Sprintf("conc-%d", i),
			})})
			failed.Add(int64(r.Failed))
			if r.Failed > 0 || r.Err != "" {
				failText.Store(r.Text + r.Err)
			}
		}()
	}
	wg.Wait()
	yettRate := float64(per*agents) / time.Since(start).Seconds()
	concSyncs = w.syncs() - concSyncs
	b.StopTimer()
	if failed.Load() != 0 {
		b.Fatalf("%d agent calls failed: %s", failed.Load(), failText.Load())
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(dFresh.p(.5)), "direct-fresh-p50-µs")
	b.ReportMetric(us(dKept.p(.5)), "direct-kept-p50-µs")
	b.ReportMetric(us(yett.p(.5)), "yett-p50-µs")
	b.ReportMetric(us(yett.p(.99)), "yett-p99-µs")
	b.ReportMetric(float64(yett.p(.5))/float64(dFresh.p(.5)), "p50-x-fresh")
	b.ReportMetric(float64(yett.p(.99))/float64(dFresh.p(.99)), "p99-x-fresh")
	b.ReportMetric(float64(yett.p(.5))/float64(dKept.p(.5)), "p50-x-kept")
	b.ReportMetric(freshRate, "direct-fresh-16-calls/s")
	b.ReportMetric(keptRate, "direct-kept-16-calls/s")
	b.ReportMetric(yettRate, "yett-16-calls/s")
	b.ReportMetric(yettRate/freshRate, "16-x-fresh")
	b.ReportMetric(float64(seqSyncs)/float64(n), "fsyncs/seq-call")
	b.ReportMetric(float64(concSyncs)/float64(per*agents), "fsyncs/16-call")
}
