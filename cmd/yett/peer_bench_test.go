//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"

	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkVsAgentVault sets an approved call through `yett serve` and the
// real `yett mcp` shim beside a direct request to the same quiet loopback
// API (over a fresh connection and a kept-alive one) and, when
// YETT_PEER_PROXY names a running Infisical agent-vault's proxy
// (build/scripts/bench-peer.sh starts one), beside the same request through
// it, its credential injected. The four alternate call by call; then 16
// clients of each run for a fixed time. Every request carries the injected
// credential except the direct ones, which carry it themselves. The data
// directory is under YETT_BENCH_DIR (default the system's temporary
// directory): a disk, or a tmpfs such as /dev/shm to take fsync out.
//
// agent-vault refuses IP addresses as a service's host, so its requests go
// to yett-bench.test (which must resolve to 127.0.0.1, see the script) at
// the same port; Yett's go to 127.0.0.1 itself.
func BenchmarkVsAgentVault(b *testing.B) {
	base, err := os.MkdirTemp(os.Getenv("YETT_BENCH_DIR"), "ypeer")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(base)
	ln := quietServer(b)
	addr := ln.Addr().String()
	_, port, _ := strings.Cut(addr, ":")
	s := startBenchServe(b, base, true, addr)
	target := "http://" + addr + "/bench"

	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	kept := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(c *http.Client, u string, auth bool) error {
		req, _ := http.NewRequest("POST", u, strings.NewReader(`{"n":1}`))
		req.Header.Set("Content-Type", "application/json")
		if auth {
			req.Header.Set("Authorization", "Bearer "+serveCanary)
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	type way struct {
		name string
		call func(i int) error
		lat  []time.Duration
	}
	ways := []*way{
		{name: "direct-fresh", call: func(int) error { return post(fresh, target, true) }},
		{name: "direct-kept", call: func(int) error { return post(kept, target, true) }},
	}
	var peer *http.Client
	if p := os.Getenv("YETT_PEER_PROXY"); p != "" {
		pu, err := url.Parse(p)
		if err != nil {
			b.Fatalf("YETT_PEER_PROXY: %v", err)
		}
		peer = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: 64}}
		peerURL := "http://yett-bench.test:" + port + "/bench"
		ways = append(ways, &way{name: "agent-vault", call: func(int) error { return post(peer, peerURL, false) }})
	}
	var shims []*exec.Cmd
	newAgent := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "peer-bench", Version: "0"}, nil)
		shim := shimCmd(s.runDir)
		sess, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: shim}, nil)
		if err != nil {
			b.Fatal(err)
		}
		shims = append(shims, shim)
		return sess
	}
	var seq atomic.Int64
	viaYett := func(sess *mcp.ClientSession) error {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "http.request", Arguments: map[string]any{
			"method": "POST", "url": target, "body": map[string]any{"n": 1},
			"idempotency_key": fmt.Sprintf("peer-%d", seq.Add(1)),
		}})
		if err == nil && (res.IsError || !bytes.Contains([]byte(res.Content[0].(*mcp.TextContent).Text), []byte(`"status":200`))) {
			err = fmt.Errorf("%v", res.Content[0].(*mcp.TextContent).Text)
		}
		return err
	}
	agent := newAgent()
	defer agent.Close()
	first := make(chan error, 1)
	go func() { first <- viaYett(agent) }()
	s.approveAgents(1, 20*time.Second)
	if err := <-first; err != nil {
		b.Fatal(err)
	}
	ways = append(ways, &way{name: "yett", call: func(int) error { return viaYett(agent) }})

	n := max(b.N, 200)
	b.ResetTimer()
	for i := 0; i < n; i++ {
		for _, w := range ways {
			t0 := time.Now()
			if err := w.call(i); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
			w.lat = append(w.lat, time.Since(t0))
		}
	}

	// 16 clients of each, for a fixed window.
	const clients = 16
	window := 3 * time.Second
	rate := func(call func(c int) error) float64 {
		var done, failed atomic.Int64
		stop := time.Now().Add(window)
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					if call(c) == nil {
						done.Add(1)
					} else {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if failed.Load() > 0 {
			b.Fatalf("%d calls failed", failed.Load())
		}
		return float64(done.Load()) / window.Seconds()
	}
	// This process runs the clients of every way and the upstream API: its
	// CPU during a way's window is what the clients and the API cost there.
	self := os.Getpid()
	selfBefore := cpuTime(self)
	freshRate := rate(func(int) error { return post(fresh, target, true) })
	freshSelfCPU := cpuTime(self) - selfBefore
	var peerRate float64
	var peerCPU, peerSelfCPU time.Duration
	if peer != nil {
		peerURL := "http://yett-bench.test:" + port + "/bench"
		peerPID, _ := strconv.Atoi(os.Getenv("YETT_PEER_PID"))
		before, selfBefore := cpuTime(peerPID), cpuTime(self)
		peerRate = rate(func(int) error { return post(peer, peerURL, false) })
		peerSelfCPU = cpuTime(self) - selfBefore
		if peerPID > 0 {
			peerCPU = cpuTime(peerPID) - before
		}
	}
	agents := make([]*mcp.ClientSession, clients)
	var wg sync.WaitGroup
	for i := range agents {
		agents[i] = newAgent()
		defer agents[i].Close()
		wg.Add(1)
		go func() { defer wg.Done(); viaYett(agents[i]) }()
	}
	s.approveAgents(clients, 20*time.Second)
	wg.Wait()
	shimsCPU := func() (t time.Duration) {
		for _, c := range shims[1:] { // the 16 agents' shims
			t += cpuTime(c.Process.Pid)
		}
		return t
	}
	serveBefore, shimsBefore := cpuTime(s.cmd.Process.Pid), shimsCPU()
	selfBefore = cpuTime(self)
	yettRate := rate(func(c int) error { return viaYett(agents[c]) })
	serveCPU := cpuTime(s.cmd.Process.Pid) - serveBefore
	yettSelfCPU := cpuTime(self) - selfBefore
	yettShimsCPU := shimsCPU() - shimsBefore
	b.StopTimer()

	p := func(d []time.Duration, q float64) time.Duration {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(float64(len(s)-1)*q)]
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	byName := map[string]*way{}
	for _, w := range ways {
		byName[w.name] = w
		b.ReportMetric(us(p(w.lat, .5)), w.name+"-p50-µs")
		b.ReportMetric(us(p(w.lat, .99)), w.name+"-p99-µs")
	}
	y, f := byName["yett"], byName["direct-fresh"]
	b.ReportMetric(float64(p(y.lat, .5))/float64(p(f.lat, .5)), "yett-p50-x-fresh")
	b.ReportMetric(freshRate, "direct-fresh-16-calls/s")
	b.ReportMetric(yettRate, "yett-16-calls/s")
	// The server's CPU per call at 16 clients: all of `yett serve`'s threads
	// (not the shims'), and the peer's whole process when YETT_PEER_PID
	// names it.
	perCall := func(cpu time.Duration, rate float64) float64 {
		return float64(cpu.Microseconds()) / 1e3 / (rate * window.Seconds())
	}
	b.ReportMetric(perCall(serveCPU, yettRate), "yett-serve-cpu-ms/call")
	// What the rest of the machine spent per call at 16 clients: the
	// clients with the API (this process), and for Yett the 16 shims. The
	// machine has two cores for all of it, so these set the rates as much
	// as the servers do: an MCP client and its shim cost more than an HTTP
	// client.
	b.ReportMetric(perCall(freshSelfCPU, freshRate), "direct-fresh-clients-cpu-ms/call")
	b.ReportMetric(perCall(yettSelfCPU, yettRate), "yett-agents-cpu-ms/call")
	b.ReportMetric(perCall(yettShimsCPU, yettRate), "yett-shims-cpu-ms/call")
	b.ReportMetric(perCall(serveCPU+yettSelfCPU+yettShimsCPU, yettRate), "yett-all-cpu-ms/call")
	if av := byName["agent-vault"]; av != nil {
		b.ReportMetric(float64(p(y.lat, .5))/float64(p(av.lat, .5)), "yett-p50-x-peer")
		b.ReportMetric(float64(p(y.lat, .99))/float64(p(av.lat, .99)), "yett-p99-x-peer")
		b.ReportMetric(peerRate, "agent-vault-16-calls/s")
		b.ReportMetric(yettRate/peerRate, "yett-16-x-peer")
		b.ReportMetric(perCall(peerSelfCPU, peerRate), "agent-vault-clients-cpu-ms/call")
		if peerCPU > 0 {
			b.ReportMetric(perCall(peerCPU, peerRate), "agent-vault-cpu-ms/call")
			b.ReportMetric(perCall(peerCPU+peerSelfCPU, peerRate), "agent-vault-all-cpu-ms/call")
		}
	}
}
