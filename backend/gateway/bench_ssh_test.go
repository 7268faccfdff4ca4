//go:build unix

package gateway

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/vault"
)

// openSSH runs OpenSSH's ssh client against the world's sshd with the
// same key Yett holds (written to a private temporary file: benchmarks
// only), the host key pinned the same way, and no user configuration.
// With reuse, connections share one master (ControlMaster), as Yett's
// executor keeps one open per host.
type openSSH struct {
	args []string
	stop func()
}

func newOpenSSH(b *testing.B, s *sshWorld, reuse bool) *openSSH {
	b.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		b.Fatal("OpenSSH's ssh client is needed (build/scripts/deps.sh installs openssh-client)")
	}
	dir, err := os.MkdirTemp("", "yb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	key := filepath.Join(dir, "id")
	if err := os.WriteFile(key, s.pair.PEM, 0o600); err != nil {
		b.Fatal(err)
	}
	known := filepath.Join(dir, "known_hosts")
	line := fmt.Sprintf("[%s]:%d %s\n", s.srv.Host, s.srv.Port, s.srv.HostKey)
	if err := os.WriteFile(known, []byte(line), 0o600); err != nil {
		b.Fatal(err)
	}
	o := &openSSH{args: []string{"-F", "/dev/null", "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile=" + known, "-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes",
		"-o", "LogLevel=ERROR", "-p", strconv.Itoa(s.srv.Port)}, stop: func() {}}
	if reuse {
		cp := filepath.Join(dir, "cm")
		o.args = append(o.args, "-o", "ControlMaster=auto", "-o", "ControlPath="+cp, "-o", "ControlPersist=120")
		o.stop = func() {
			exec.Command("ssh", append(append([]string{}, o.args...), "-O", "exit", s.srv.User+"@"+s.srv.Host)...).Run()
		}
	}
	o.args = append(o.args, s.srv.User+"@"+s.srv.Host, "true")
	return o
}

func (o *openSSH) run(b *testing.B) {
	if out, err := exec.Command("ssh", o.args...).CombinedOutput(); err != nil {
		b.Fatalf("ssh: %v %s", err, out)
	}
}

// BenchmarkSSHExecVsOpenSSH measures, in one run, ssh.exec of `true`
// through `yett mcp` and the gateway (the host's checks, journal and audit
// fsyncs, the key lent from the vault, the outcome made durable) against
// OpenSSH's ssh client from the shell running `true` on the same sshd with
// the same key, alternating the two: with connection reuse (Yett's pool;
// ssh's ControlMaster) and without (a new connection, key exchange and
// authentication per command on both sides).
func BenchmarkSSHExecVsOpenSSH(b *testing.B) {
	for _, reuse := range []bool{true, false} {
		name := "reuse"
		if !reuse {
			name = "no-reuse"
		}
		b.Run(name, func(b *testing.B) {
			s := newSSHWorld(b, sshOpts{approval: vault.ApprovalSession, noReuse: !reuse})
			defer autoApprove(s.world)()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
			sess, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: newShimCmd(s.runDir)}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			call := func(i int) {
				res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: agentapi.ToolSSHExec,
					Arguments: map[string]any{"host": "web-1", "command": "true", "idempotency_key": fmt.Sprintf("bench-%s-%d-%d", name, b.N, i)}})
				if err != nil || res.IsError {
					b.Fatalf("ssh.exec: %v %+v", err, res)
				}
			}
			o := newOpenSSH(b, s, reuse)
			defer o.stop()
			// The session approval and the first connections are not
			// part of the figures.
			call(-1)
			o.run(b)
			var yett, direct []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				call(i)
				yett = append(yett, time.Since(t0))
				t0 = time.Now()
				o.run(b)
				direct = append(direct, time.Since(t0))
			}
			b.StopTimer()
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
			b.ReportMetric(us(percentile(yett, .5)), "yett-p50-µs")
			b.ReportMetric(us(percentile(yett, .99)), "yett-p99-µs")
			b.ReportMetric(us(percentile(direct, .5)), "openssh-p50-µs")
			b.ReportMetric(us(percentile(direct, .99)), "openssh-p99-µs")
			b.ReportMetric(us(percentile(yett, .5)-percentile(direct, .5)), "added-p50-µs")
		})
	}
}

// BenchmarkSSHConcurrentAgents16 runs 16 agent processes, each running
// `true` through ssh.exec back to back on one host (connections reused),
// and reports commands per second through one gateway, next to 16 ssh
// clients doing the same over one ControlMaster connection each.
func BenchmarkSSHConcurrentAgents16(b *testing.B) {
	const agents = 16
	s := newSSHWorld(b, sshOpts{approval: vault.ApprovalSession})
	defer autoApprove(s.world)()
	as := make([]*agent, agents)
	for i := range as {
		as[i] = startAgent(b, s.runDir)
		as[i].connect()
	}
	clients := make([]*openSSH, agents)
	for i := range clients {
		clients[i] = newOpenSSH(b, s, true)
		defer clients[i].stop()
		clients[i].run(b)
	}
	per := b.N/agents + 1
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i, a := range as {
		wg.Add(1)
		go func(i int, a *agent) {
			defer wg.Done()
			r := a.do(agentCmd{Op: "loop", Tool: agentapi.ToolSSHExec, Args: mustJSON(map[string]any{
				"host": "web-1", "command": "true", "idempotency_key": fmt.Sprintf("conc-%d-%d", b.N, i)}), N: per})
			mu.Lock()
			failed += r.Failed
			mu.Unlock()
		}(i, a)
	}
	wg.Wait()
	yett := time.Since(start)
	b.StopTimer()
	if failed != 0 {
		b.Fatalf("%d commands failed", failed)
	}
	start = time.Now()
	for _, o := range clients {
		wg.Add(1)
		go func(o *openSSH) {
			defer wg.Done()
			for j := 0; j < per; j++ {
				o.run(b)
			}
		}(o)
	}
	wg.Wait()
	direct := time.Since(start)
	b.ReportMetric(float64(per*agents)/yett.Seconds(), "yett-cmds/s")
	b.ReportMetric(float64(per*agents)/direct.Seconds(), "openssh-cmds/s")
}
