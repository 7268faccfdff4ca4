//go:build unix

package gateway

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// peakRSS reads a process's resident high-water mark, in MiB.
func peakRSS(pid int) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkPipelinedStatusMemory is issue 9's item 18: 16 clients each
// send 3,000 yett.status calls without waiting for answers, against a
// gateway in a process of its own, and the figure is that process's peak
// resident memory. Before each connection held a bounded number of calls,
// every pipelined call got its own goroutine and answer in memory (2.5 GB
// here); now a connection holds at most 32 and answers the rest BUSY.
func BenchmarkPipelinedStatusMemory(b *testing.B) {
	const clients, calls = 16, 3000
	w := newWorld(b, worldOpts{})
	w.stop()
	w.vault.Close()
	g := startGatewayProc(b, w, "")
	pid := g.cmd.Process.Pid
	before := peakRSS(pid)
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range clients {
			s := startRawShim(b, w.runDir)
			s.initialize()
			var lines strings.Builder
			for j := range calls {
				fmt.Fprintf(&lines, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"yett.status","arguments":{"idempotency_key":"key-%d"}}}`+"\n", 100+j, j)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				go s.stdin.Write([]byte(lines.String())) // a client that reads while it writes
				for n := 0; n < calls; n++ {
					select {
					case <-s.lines:
					case <-time.After(testWait):
						b.Errorf("%d of %d answers", n, calls)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	b.ReportMetric(before, "MiB-before")
	b.ReportMetric(peakRSS(pid), "MiB-peak")
}
