//go:build linux

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
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test binary doubles as the helper programs, chosen by $PROCID_ROLE:
//
//	agent:   an MCP client: starts the shim (a copy of this binary, so a
//	         different executable) with pipes on its stdin and stdout whose
//	         other ends it keeps, as every MCP client does
//	         ($PROCID_STDIO=socket: socket pairs, as Node's libuv makes them;
//	         =wrapped: through /bin/sh, as `npx` or a shell line would),
//	         prints "shim <pid>", then obeys stdin: "exec" makes it execve
//	         /bin/sleep, "exec-self" re-executes its own file with other
//	         arguments (as `exec node other.js` would), EOF makes it exit.
//	         With $PROCID_POSE set it is the agent of issue 9's attack
//	         instead: it runs a program (the poser) and connects nothing.
//	poser:   a program the agent ran: it starts a background driver holding
//	         pipes to itself, prints "driver <pid>", then execs the genuine
//	         shim on those pipes ($PROCID_POSE=nodriver: on /dev/null;
//	         =twodrivers: two drivers hold them; =foreigndriver: the driver
//	         runs as uid 65534).
//	driver:  holds the shim's stdio until the shim's output ends.
//	sleeper: what exec-self becomes; waits for stdin to end.
//	shim:    connects to $PROCID_SOCK and waits for the socket to close.
func TestMain(m *testing.M) {
	switch os.Getenv("PROCID_ROLE") {
	case "agent":
		runAgent()
	case "poser":
		runPoser()
	case "driver", "sleeper":
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "shim":
		runShim()
	default:
		os.Exit(m.Run())
	}
}

func runAgent() {
	if os.Getenv("PROCID_POSE") != "" {
		runPosingAgent()
		return
	}
	shim, keep, err := startShim(os.Getenv("PROCID_STDIO"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(3)
	}
	fmt.Printf("shim %d\n", shim.Process.Pid)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "exec":
			err := syscall.Exec("/bin/sleep", []string{"sleep", "600"}, os.Environ())
			fmt.Fprintln(os.Stderr, "agent: exec:", err)
			os.Exit(4)
		case "exec-self":
			// Same file, same pid, same start time: only the arguments
			// say that another program runs now.
			self, _ := os.Executable()
			err := syscall.Exec(self, []string{"agent", "--now-another-program"}, withEnv(os.Environ(), "PROCID_ROLE", "sleeper"))
			fmt.Fprintln(os.Stderr, "agent: exec-self:", err)
			os.Exit(4)
		}
	}
	shim.Process.Kill()
	shim.Wait()
	runtime.KeepAlive(keep)
	os.Exit(0)
}

// startShim starts the shim with its stdin and stdout connected to this
// process the way MCP clients connect them, and returns the ends this
// process keeps.
func startShim(stdio string) (*exec.Cmd, []*os.File, error) {
	shim := exec.Command(os.Getenv("PROCID_SHIM"))
	if stdio == "wrapped" {
		// A forking shell, not an exec: the shell stays the shim's parent.
		shim = exec.Command("/bin/sh", "-c", `"$0"; exit $?`, os.Getenv("PROCID_SHIM"))
	}
	shim.Env = withEnv(os.Environ(), "PROCID_ROLE", "shim")
	shim.Stderr = os.Stderr
	var keep, theirs []*os.File
	for range 2 {
		var mine, child *os.File
		if stdio == "socket" {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return nil, nil, err
			}
			mine, child = os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "child")
		} else {
			r, w, err := os.Pipe()
			if err != nil {
				return nil, nil, err
			}
			if len(theirs) == 0 { // stdin: the child reads
				mine, child = w, r
			} else {
				mine, child = r, w
			}
		}
		keep, theirs = append(keep, mine), append(theirs, child)
	}
	shim.Stdin, shim.Stdout = theirs[0], theirs[1]
	if err := shim.Start(); err != nil {
		return nil, nil, err
	}
	for _, f := range theirs {
		f.Close()
	}
	return shim, keep, nil
}

// runPosingAgent runs the poser as a command of its own (as an agent runs
// a shell command) and reports its pid as the shim's: the poser becomes
// the shim by exec.
func runPosingAgent() {
	self, _ := os.Executable()
	poser := exec.Command(self)
	poser.Env = withEnv(os.Environ(), "PROCID_ROLE", "poser")
	poser.Stdout, poser.Stderr = os.Stdout, os.Stderr
	if err := poser.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(3)
	}
	fmt.Printf("shim %d\n", poser.Process.Pid)
	io.Copy(io.Discard, os.Stdin)
	poser.Process.Kill()
	poser.Wait()
	os.Exit(0)
}

// runPoser is the attack: a background driver holds the other ends of the
// pipes, then this process execs the genuine shim on them. The shim's
// parent is the agent; the agent holds nothing of its stdio.
func runPoser() {
	stdin, stdout := os.Stdin, os.Stdout
	if os.Getenv("PROCID_POSE") == "nodriver" {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			os.Exit(3)
		}
		stdin, stdout = null, null
		fmt.Println("driver 0")
	} else {
		inR, inW, err1 := os.Pipe()
		outR, outW, err2 := os.Pipe()
		if err1 != nil || err2 != nil {
			os.Exit(3)
		}
		self, _ := os.Executable()
		drivers := 1
		if os.Getenv("PROCID_POSE") == "twodrivers" {
			drivers = 2
		}
		for i := range drivers {
			driver := exec.Command(self)
			driver.Env = withEnv(os.Environ(), "PROCID_ROLE", "driver")
			driver.Stdin, driver.Stdout, driver.Stderr = outR, inW, os.Stderr
			if os.Getenv("PROCID_POSE") == "foreigndriver" {
				driver.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			if err := driver.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "poser:", err)
				os.Exit(3)
			}
			if i == 0 {
				fmt.Printf("driver %d\n", driver.Process.Pid)
			}
		}
		stdin, stdout = inR, outW
	}
	if err := unix.Dup2(int(stdin.Fd()), 0); err != nil {
		os.Exit(3)
	}
	if err := unix.Dup2(int(stdout.Fd()), 1); err != nil {
		os.Exit(3)
	}
	err := syscall.Exec(os.Getenv("PROCID_SHIM"), []string{"yett", "mcp"}, withEnv(os.Environ(), "PROCID_ROLE", "shim"))
	fmt.Fprintln(os.Stderr, "poser: exec:", err)
	os.Exit(4)
}

// withEnv returns env with key set to value (syscall.Exec does not
// de-duplicate, and the first of two wins).
func withEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
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
	// netns starts the agent (and so its shim) in a network namespace of
	// its own, inside a user namespace that maps this user to itself, as
	// `unshare -rn` does: what a container or sandbox around an agent does.
	netns bool
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
	// driverPID is the poser's driver (0 when there is none).
	driverPID int
	conn      *net.UnixConn
}

// startAgent starts a genuine agent: the shim's stdio is pipes it holds.
func (f *fixture) startAgent(t testing.TB) *agent { return f.start(t, "PROCID_STDIO=pipe") }

// startPoser starts an agent that runs the poser (issue 9, item 6) in
// mode: "driver" leaves the shim's stdio to a background driver,
// "nodriver" to /dev/null, "twodrivers" to two, "foreigndriver" to one
// of another user.
func (f *fixture) startPoser(t testing.TB, mode string) *agent {
	a := f.start(t, "PROCID_POSE="+mode)
	if mode != "nodriver" && a.driverPID == 0 {
		t.Fatal("the poser did not report its driver")
	}
	return a
}

// start runs the agent with extra environment and accepts its shim.
func (f *fixture) start(t testing.TB, env ...string) *agent {
	t.Helper()
	cmd := exec.Command(f.agentBin)
	cmd.Env = append(os.Environ(), "PROCID_ROLE=agent", "PROCID_SHIM="+f.shimBin, "PROCID_SOCK="+f.ln.Addr().String())
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if f.netns {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		}
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &agent{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if a.driverPID > 0 {
			syscall.Kill(a.driverPID, syscall.SIGKILL)
		}
	})
	out := bufio.NewReader(stdout)
	lines := 1
	for _, e := range env {
		if strings.HasPrefix(e, "PROCID_POSE=") {
			lines = 2 // the poser's "driver <pid>" too, in either order
		}
	}
	for range lines {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("agent did not report its shim: %v", err)
		}
		word, n, _ := strings.Cut(strings.TrimSpace(line), " ")
		pid, _ := strconv.Atoi(n)
		switch word {
		case "shim":
			a.shimPID = pid
		case "driver":
			a.driverPID = pid
		}
	}
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
