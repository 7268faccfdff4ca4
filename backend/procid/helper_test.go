package procid

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the helper programs, chosen by $PROCID_ROLE:
//
//	agent: starts the shim (a copy of this binary, so a different
//	       executable), prints "shim <pid>", then obeys stdin: "exec" makes it
//	       execve /bin/sleep, EOF makes it exit.
//	shim:  connects to $PROCID_SOCK and waits for the socket to close.
func TestMain(m *testing.M) {
	switch os.Getenv("PROCID_ROLE") {
	case "agent":
		runAgent()
	case "shim":
		runShim()
	default:
		os.Exit(m.Run())
	}
}

func runAgent() {
	shim := exec.Command(os.Getenv("PROCID_SHIM"))
	shim.Env = append(os.Environ(), "PROCID_ROLE=shim")
	shim.Stderr = os.Stderr
	if err := shim.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(3)
	}
	fmt.Printf("shim %d\n", shim.Process.Pid)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "exec" {
			err := syscall.Exec("/bin/sleep", []string{"sleep", "600"}, os.Environ())
			fmt.Fprintln(os.Stderr, "agent: exec:", err)
			os.Exit(4)
		}
	}
	shim.Process.Kill()
	shim.Wait()
	os.Exit(0)
}

func runShim() {
	c, err := net.Dial("unix", os.Getenv("PROCID_SOCK"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "shim:", err)
		os.Exit(3)
	}
	io.Copy(io.Discard, c)
	os.Exit(0)
}

// fixture holds copies of the test binary for agent and shim, and the
// socket they connect to.
type fixture struct {
	dir, agentBin, shimBin string
	ln                     *net.UnixListener
}

// copyExe copies the test binary to path, mode 0755.
func copyExe(t testing.TB, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, agentBin: filepath.Join(dir, "agent"), shimBin: filepath.Join(dir, "yett")}
	copyExe(t, f.agentBin)
	copyExe(t, f.shimBin)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "gateway.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	f.ln = ln
	t.Cleanup(func() { ln.Close() })
	return f
}

// agent is one running agent process with its shim connected.
type agent struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	shimPID int
	conn    *net.UnixConn
}

func (f *fixture) startAgent(t testing.TB) *agent {
	t.Helper()
	cmd := exec.Command(f.agentBin)
	cmd.Env = append(os.Environ(), "PROCID_ROLE=agent", "PROCID_SHIM="+f.shimBin, "PROCID_SOCK="+f.ln.Addr().String())
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &agent{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("agent did not report its shim: %v", err)
	}
	a.shimPID, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "shim ")))
	f.ln.SetDeadline(time.Now().Add(30 * time.Second))
	conn, err := f.ln.AcceptUnix()
	if err != nil {
		t.Fatalf("shim did not connect: %v", err)
	}
	a.conn = conn
	t.Cleanup(func() { conn.Close() })
	return a
}

func fileSHA256(t testing.TB, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// eventually polls cond for up to 10 s (a bound, not a speed assertion).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
