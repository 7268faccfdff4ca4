//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/ptytest"
)

// rssMiB reads a process's resident set and its high-water mark, in MiB.
func rssMiB(pid int) (rss, hwm float64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		}
	}
	return rss, hwm
}

// cpuTime is the CPU time a whole process (every thread) has used, from
// /proc/PID/stat's utime and stime, in clock ticks of 1/100 s.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// anonMiB is the process's private (anonymous) resident memory: RSS less
// the pages of files it maps, its own executable first of all.
func anonMiB(pid int) float64 { return procField(fmt.Sprintf("/proc/%d/status", pid), "RssAnon:") }

// pssMiB is the process's proportional share of resident memory: a page
// shared with other processes (the executable's, with every `yett mcp`
// shim) counts divided by the processes that map it.
func pssMiB(pid int) float64 { return procField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:") }

// procField reads a "Name: <kB> kB" line of a /proc file, in MiB.
func procField(path, name string) float64 {
	b, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == name {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// benchServe is `yett serve` for a benchmark: a vault under base (the
// default key derivation unless fastKDF) holding one session credential
// bound to hosts, unlocked at a pseudo-terminal, with every card to be
// answered there (approveAgents).
type benchServe struct {
	cmd    *exec.Cmd
	runDir string
	master *os.File
	tty    *ttyLog
	cards  int // cards approved so far
}

func startBenchServe(b *testing.B, base string, fastKDF bool, hosts ...string) *benchServe {
	b.Helper()
	dataDir := filepath.Join(base, "data")
	var o vault.Options
	if fastKDF {
		o.KDF = vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}
	}
	v, err := vault.Open(dataDir, o)
	if err != nil {
		b.Fatal(err)
	}
	if err := v.Create(vault.Passphrase(servePassphrase), false); err != nil {
		b.Fatal(err)
	}
	if _, err := v.Credentials().Add(vault.NewCredential{Name: "api", Secret: vault.NewSecret([]byte(serveCanary)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: hosts, Approval: vault.ApprovalSession}); err != nil {
		b.Fatal(err)
	}
	v.Close()
	s := &benchServe{runDir: filepath.Join(base, "run"), tty: &ttyLog{}}
	var slave *os.File
	s.master, slave = ptytest.Open(b)
	go io.Copy(s.tty, s.master)
	s.cmd = exec.Command(yettBin, "serve")
	s.cmd.Env = append(os.Environ(), "YETT_DATA_DIR="+dataDir, "YETT_RUNTIME_DIR="+s.runDir)
	ptytest.Attach(s.cmd, slave)
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	s.tty.waitFor(b, "passphrase:")
	s.master.Write([]byte(servePassphrase + "\n"))
	s.tty.waitFor(b, "gateway listening")
	return s
}

// approveAgents answers the next n session cards at the terminal ("y N
// CODE") as they show, for at most d.
func (s *benchServe) approveAgents(n int, d time.Duration) {
	until := time.Now().Add(d)
	for last := s.cards + n; s.cards < last && time.Now().Before(until); {
		if code := cardCode(s.tty.String(), s.cards+1); code != "" {
			s.cards++
			s.master.Write([]byte(fmt.Sprintf("y %d %s\n", s.cards, code)))
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// quietServer answers every request with a small body and keeps nothing.
func quietServer(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln
}

// BenchmarkServeMemory is what `yett serve` holds: resident memory right
// after the unlock (the default Argon2id key derivation, 64 MiB, has run),
// and the most it holds while 16 agents make calls back to back for a few
// seconds. The high-water mark of the whole run, the unlock included, is
// reported too.
func BenchmarkServeMemory(b *testing.B) {
	base, err := os.MkdirTemp("", "ysm")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(base)
	ln := quietServer(b)
	s := startBenchServe(b, base, false, ln.Addr().String())
	cmd, runDir := s.cmd, s.runDir
	time.Sleep(200 * time.Millisecond)
	afterUnlock, _ := rssMiB(cmd.Process.Pid)

	var peak, peakAnon, peakPss float64
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				r, _ := rssMiB(cmd.Process.Pid)
				mu.Lock()
				if r > peak {
					peak, peakAnon, peakPss = r, anonMiB(cmd.Process.Pid), pssMiB(cmd.Process.Pid)
				}
				mu.Unlock()
			}
		}
	}()
	url := "http://" + ln.Addr().String() + "/x"
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := mcp.NewClient(&mcp.Implementation{Name: "mem", Version: "0"}, nil)
				s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: shimCmd(runDir)}, nil)
				if err != nil {
					b.Error(err)
					return
				}
				defer s.Close()
				// Each agent's session card is answered at the terminal.
				deadline := time.Now().Add(3 * time.Second)
				for n := 0; time.Now().Before(deadline); n++ {
					s.CallTool(context.Background(), &mcp.CallToolParams{Name: "http.request", Arguments: map[string]any{
						"method": "POST", "url": url, "body": "x", "idempotency_key": fmt.Sprintf("m-%d-%d", i, n)}})
				}
			}()
		}
		// Approve every card as it shows, for as long as calls run.
		s.approveAgents(16, 3*time.Second)
		wg.Wait()
	}
	b.StopTimer()
	close(stop)
	<-sampled
	_, hwm := rssMiB(cmd.Process.Pid)
	b.ReportMetric(afterUnlock, "MiB-after-unlock")
	b.ReportMetric(peak, "MiB-peak-16-agents")
	b.ReportMetric(peakAnon, "MiB-private-at-peak")
	b.ReportMetric(peakPss, "MiB-pss-at-peak")
	b.ReportMetric(hwm, "MiB-high-water")
}
