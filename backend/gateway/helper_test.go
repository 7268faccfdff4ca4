//go:build unix

package gateway

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// The gateway helper is this test binary re-executed with
// YETT_TEST_GATEWAY=1: the same gateway as in production, in a process of its
// own so a test can kill it with SIGKILL. It answers session cards when the
// test writes "approve" on its stdin (a control channel the test owns; the
// production surfaces, the app broker and `yett serve`'s terminal, are
// tested elsewhere).
func gatewayHelperMain() int {
	v, err := vault.Open(os.Getenv("YETT_GW_VAULT"), vault.Options{})
	if err != nil {
		fmt.Println("vault:", err)
		return 1
	}
	if err := v.Unlock(vault.Passphrase(passphrase)); err != nil {
		fmt.Println("unlock:", err)
		return 1
	}
	id, err := age.ParseX25519Identity(os.Getenv("YETT_GW_AGE"))
	if err != nil {
		fmt.Println("identity:", err)
		return 1
	}
	shim, err := os.ReadFile(os.Getenv("YETT_BIN"))
	if err != nil {
		fmt.Println("shim:", err)
		return 1
	}
	// YETT_GW_RESULT_DELAY holds outcomes for a group commit that long.
	delay, _ := time.ParseDuration(os.Getenv("YETT_GW_RESULT_DELAY"))
	log, _, err := audit.Open(audit.Options{Dir: filepath.Join(os.Getenv("YETT_GW_DATA"), AuditDir), Recipient: id.Recipient(), ResultDelay: delay, Carried: CarriedAudit(os.Getenv("YETT_GW_DATA"))})
	if err != nil {
		fmt.Println("audit:", err)
		return 1
	}
	defer log.Close()
	gw, err := New(Config{Vault: v, DataDir: os.Getenv("YETT_GW_DATA"), RuntimeDir: os.Getenv("YETT_GW_RUN"),
		Audit: log, ShimSHA256: [][32]byte{sha256.Sum256(shim)}, ResultDelay: delay})
	if err != nil {
		fmt.Println("gateway:", err)
		return 1
	}
	if key := os.Getenv("YETT_GW_HOLD_KEY"); key != "" {
		// Frozen right before the call is recorded (nothing of it durable
		// yet) until SIGKILL.
		gw.hookBeforeIntent = func(_ context.Context, k string) {
			if k == key {
				fmt.Println("held " + k)
				select {}
			}
		}
	}
	go gw.Serve(context.Background())
	fmt.Println("ready " + gw.BootID())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "approve":
			deadline := time.Now().Add(testWait)
			answered := false
			for !answered && time.Now().Before(deadline) {
				for _, r := range gw.Broker().Pending() {
					if r.Kind == approval.KindSession {
						err := gw.Broker().Answer(r.ID, true, "test")
						fmt.Printf("approved %q %v\n", r.Change, err)
						answered = true
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
			if !answered {
				fmt.Println("no card")
			}
		}
	}
	gw.Close()
	v.Close()
	return 0
}

// gatewayProc is a gateway helper process.
type gatewayProc struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin interface {
		Write([]byte) (int, error)
		Close() error
	}
	lines chan string
}

func startGatewayProc(t testing.TB, w *world, holdKey string) *gatewayProc {
	t.Helper()
	// The helper process opens the audit log itself: one writer per log.
	w.audit.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "YETT_TEST_GATEWAY=1", "YETT_BIN="+yettBin, "YETT_GW_VAULT="+w.vaultDir, "YETT_GW_DATA="+w.dataDir,
		"YETT_GW_RUN="+w.runDir, "YETT_GW_AGE="+w.identity.String(), "YETT_GW_HOLD_KEY="+holdKey)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gatewayProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			g.lines <- sc.Text()
		}
		close(g.lines)
	}()
	t.Cleanup(func() { g.kill() })
	g.expect("ready")
	return g
}

func (g *gatewayProc) expect(prefix string) string {
	g.t.Helper()
	select {
	case l, ok := <-g.lines:
		if !ok || !strings.HasPrefix(l, prefix) {
			g.t.Fatalf("gateway helper said %q, want %q", l, prefix)
		}
		return l
	case <-time.After(testWait):
		g.t.Fatalf("gateway helper: no %q", prefix)
	}
	return ""
}

func (g *gatewayProc) approve() string {
	g.t.Helper()
	g.stdin.Write([]byte("approve\n"))
	return g.expect("approved")
}

func (g *gatewayProc) kill() {
	if g.cmd.ProcessState == nil {
		g.cmd.Process.Signal(syscall.SIGKILL)
		g.cmd.Wait()
	}
}
