//go:build linux

package main

import (
	"bufio"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkShimRoundTrip measures what the `yett mcp` shim adds to one
// message and its answer: a frame of an http.request's size written to the
// shim's stdin, carried to a gateway that echoes it at once, and carried
// back to its stdout, against the same frame written straight to the same
// echo over a Unix socket, alternating message by message. It reports
// both p50s, their ratio, and the shim's CPU time per round trip (every
// thread of the process, from /proc).
func BenchmarkShimRoundTrip(b *testing.B) {
	dir := echoGatewayDir(b)
	cmd := shimCmd(dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	direct, err := net.Dial("unix", filepath.Join(dir, gatewaySocketName))
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	viaShim, viaDirect := bufio.NewReader(stdout), bufio.NewReader(direct)
	trip := func(w io.Writer, r *bufio.Reader) time.Duration {
		t0 := time.Now()
		if _, err := w.Write(benchFrame); err != nil {
			b.Fatal(err)
		}
		line, err := r.ReadBytes('\n')
		if err != nil || len(line) != len(benchFrame) {
			b.Fatalf("answer of %d bytes: %v", len(line), err)
		}
		return time.Since(t0)
	}
	for range 50 { // both paths warm
		trip(stdin, viaShim)
		trip(direct, viaDirect)
	}
	n := max(b.N, 2000)
	shim, straight := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	cpu0 := cpuTime(cmd.Process.Pid)
	b.ResetTimer()
	for range n {
		shim = append(shim, trip(stdin, viaShim))
		straight = append(straight, trip(direct, viaDirect))
	}
	b.StopTimer()
	cpu := cpuTime(cmd.Process.Pid) - cpu0
	p50 := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	ps, pd := p50(shim), p50(straight)
	b.ReportMetric(float64(ps.Nanoseconds())/1e3, "shim-p50-µs")
	b.ReportMetric(float64(pd.Nanoseconds())/1e3, "direct-p50-µs")
	b.ReportMetric(float64(ps)/float64(pd), "p50-ratio")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(n), "shim-cpu-µs/trip")
}

// BenchmarkShimRoundTrip16 is BenchmarkShimRoundTrip with 16 shims at
// once, each carrying one message at a time for a fixed window, as 16
// agents calling without pause would: the round trips per second and the
// shims' CPU time per round trip, all 16 processes together.
func BenchmarkShimRoundTrip16(b *testing.B) {
	dir := echoGatewayDir(b)
	type shim struct {
		cmd *exec.Cmd
		in  io.WriteCloser
		out *bufio.Reader
	}
	shims := make([]shim, 16)
	for i := range shims {
		cmd := shimCmd(dir)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		shims[i] = shim{cmd, in, bufio.NewReader(out)}
		defer func() { in.Close(); cmd.Wait() }()
	}
	window := 2 * time.Second
	if testing.Short() {
		window = 300 * time.Millisecond
	}
	var trips atomic.Int64
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		before := time.Duration(0)
		for _, s := range shims {
			before += cpuTime(s.cmd.Process.Pid)
		}
		stop := time.Now().Add(window)
		var wg sync.WaitGroup
		for _, s := range shims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					if _, err := s.in.Write(benchFrame); err != nil {
						b.Error(err)
						return
					}
					if _, err := s.out.ReadBytes('\n'); err != nil {
						b.Error(err)
						return
					}
					trips.Add(1)
				}
			}()
		}
		wg.Wait()
		for _, s := range shims {
			cpu += cpuTime(s.cmd.Process.Pid)
		}
		cpu -= before
	}
	b.StopTimer()
	b.ReportMetric(float64(trips.Load())/(window.Seconds()*float64(b.N)), "trips/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(trips.Load()), "shim-cpu-µs/trip")
}

// benchFrame is a tools/call of an http.request's size.
var benchFrame = []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"http.request","arguments":{"method":"POST","url":"http://127.0.0.1:4545/bench","body":{"n":1},"idempotency_key":"bench-0000001"}}}` + "\n")

// echoGatewayDir is a runtime directory whose gateway socket echoes every
// line of every connection at once.
func echoGatewayDir(b *testing.B) string {
	dir, ln := gatewayListener(b)
	go echoEvery(ln)
	return dir
}

// echoEvery answers every connection ln accepts by echoing each line.
func echoEvery(ln *net.UnixListener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			r := bufio.NewReader(conn)
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return
				}
				if _, err := conn.Write(line); err != nil {
					return
				}
			}
		}()
	}
}
