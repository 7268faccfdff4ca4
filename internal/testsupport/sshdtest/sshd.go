//go:build unix

// Package sshdtest runs a real OpenSSH sshd on 127.0.0.1 for tests: its own
// host key, its own authorized_keys file and configuration in a temporary
// directory, an unprivileged port, and the test's own user. Nothing on the
// machine's sshd configuration is read or changed.
//
// sshd must be installed (Debian's openssh-server; build/scripts/deps.sh
// installs it). Start fails the test when it is missing: tests are never
// skipped for a missing part.
package sshdtest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is where Debian installs sshd.
const Binary = "/usr/sbin/sshd"

// Options tune Start.
type Options struct {
	// HostKeyType is the host key's type: "ed25519" (the default), "ecdsa"
	// or "rsa".
	HostKeyType string
	// MaxStartups bounds concurrent unauthenticated connections; 0 means
	// 200 (sshd's own default, 10, refuses concurrent agents at random).
	MaxStartups int
	// Root logs in as root (the test must run as root): what OpenSSH does
	// with root logins differs (it refuses to signal their commands).
	Root bool
}

// Server is a running sshd.
type Server struct {
	Host string // 127.0.0.1
	Port int
	User string // the user tests log in as: the one running the test
	Dir  string
	// HostKey is the host's public key as an authorized_keys line
	// ("ssh-ed25519 AAAA..."), what a known_hosts file would pin.
	HostKey string

	opts Options
	t    testing.TB
	mu   sync.Mutex
	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start starts sshd with an ed25519 host key and stops it at the end of the
// test.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith starts sshd with o.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Fatalf("sshdtest: %s is missing: install openssh-server (build/scripts/deps.sh test)", Binary)
	}
	if o.HostKeyType == "" {
		o.HostKeyType = "ed25519"
	}
	if o.MaxStartups == 0 {
		o.MaxStartups = 200
	}
	// sshd refuses to start without its privilege separation directory.
	os.MkdirAll("/run/sshd", 0o755)
	dir, err := os.MkdirTemp("", "sshdtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	login, err := LoginUser()
	if err != nil {
		t.Fatal(err)
	}
	if o.Root {
		if os.Geteuid() != 0 {
			t.Fatal("sshdtest: a root login needs the test to run as root")
		}
		login = "root"
	}
	// sshd reads authorized_keys as the user who logs in.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{Host: "127.0.0.1", User: login, Dir: dir, opts: o, t: t, log: &lockedBuffer{}}
	if err := os.WriteFile(s.authorizedKeys(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.newHostKey()
	for attempt := 0; ; attempt++ {
		s.Port = freePort(t)
		if err := s.start(); err == nil {
			break
		} else if attempt == 4 {
			t.Fatalf("sshdtest: sshd did not start: %v\n%s", err, s.log.String())
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// TestUser is the account tests log in as when they run as root:
// build/scripts/deps.sh creates it. OpenSSH refuses the "signal" request
// for root logins (there is no privilege-separated session to send it
// from), and Yett's tests must see a remote command receive SIGHUP.
const TestUser = "yett-sshtest"

// LoginUser is the user tests log in as: TestUser when running as root,
// else the user running the test.
func LoginUser() (string, error) {
	if os.Geteuid() == 0 {
		if _, err := user.Lookup(TestUser); err != nil {
			return "", fmt.Errorf("sshdtest: running as root, tests log in as %s, which does not exist: run build/scripts/deps.sh test", TestUser)
		}
		return TestUser, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// Scratch makes a directory the remote commands of a test may write into
// (they run as User), removed at the end of the test.
func (s *Server) Scratch(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sshdtest-scratch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Log is what sshd wrote so far.
func (s *Server) Log() string { return s.log.String() }

func (s *Server) authorizedKeys() string { return filepath.Join(s.Dir, "authorized_keys") }
func (s *Server) hostKeyPath() string    { return filepath.Join(s.Dir, "hostkey") }

// newHostKey makes a fresh host key of the configured type.
func (s *Server) newHostKey() {
	s.t.Helper()
	p := s.hostKeyPath()
	os.Remove(p)
	os.Remove(p + ".pub")
	args := []string{"-q", "-t", s.opts.HostKeyType, "-N", "", "-f", p}
	if s.opts.HostKeyType == "rsa" {
		args = append(args, "-b", "2048")
	}
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		s.t.Fatalf("sshdtest: ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(p + ".pub")
	if err != nil {
		s.t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	s.HostKey = f[0] + " " + f[1]
}

func (s *Server) config() string {
	return fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PidFile %s
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AllowAgentForwarding no
AllowTcpForwarding no
X11Forwarding no
PermitUserEnvironment no
MaxStartups %d
MaxSessions 64
LoginGraceTime 30
LogLevel VERBOSE
`, s.Port, s.hostKeyPath(), s.authorizedKeys(), filepath.Join(s.Dir, "sshd.pid"), s.opts.MaxStartups)
}

func (s *Server) start() error {
	cfg := filepath.Join(s.Dir, "sshd_config")
	if err := os.WriteFile(cfg, []byte(s.config()), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(Binary, "-D", "-e", "-f", cfg)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A remote command left running holds no pipe of ours, but do not let
	// a stray one keep Stop waiting.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("sshd exited")
		default:
		}
		if banner(s.Addr()) {
			s.mu.Lock()
			s.cmd, s.done = cmd, done
			s.mu.Unlock()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-done
	return fmt.Errorf("sshd did not answer on %s", s.Addr())
}

// banner says whether an SSH server answers on addr.
func banner(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "SSH-2.0-")
}

// Authorize lets a client key log in: pub is an authorized_keys line.
func (s *Server) Authorize(t testing.TB, pub string) {
	t.Helper()
	f, err := os.OpenFile(s.authorizedKeys(), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.TrimSpace(pub) + "\n"); err != nil {
		t.Fatal(err)
	}
}

// Revoke removes every authorized key.
func (s *Server) Revoke(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(s.authorizedKeys(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Stop stops sshd (and every connection it serves).
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	// The listener and every process it started: sshd gives each
	// connection a session of its own, which a signal to the listener's
	// process group would not reach, and which holds sshd's log pipe.
	for _, pid := range descendants(cmd.Process.Pid) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// Restart stops sshd and starts it again on the same port, with a new host
// key when newHostKey is set (a changed host, or a man in the middle).
func (s *Server) Restart(t testing.TB, newHostKey bool) {
	t.Helper()
	s.Stop()
	if newHostKey {
		s.newHostKey()
	}
	var err error
	for range 20 {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond) // the port may linger a moment
	}
	t.Fatalf("sshdtest: restart: %v\n%s", err, s.Log())
}

// KillSessions kills, with SIGKILL, every process sshd started for a
// connection (the per-connection sshd processes, not the commands they
// run): the connection breaks as a network cut would break it.
func (s *Server) KillSessions(t testing.TB) int {
	t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		t.Fatal("sshdtest: not running")
	}
	n := 0
	for _, pid := range descendants(cmd.Process.Pid) {
		if isSSHD(comm(pid)) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}

// ConnectionCount is how many per-connection sshd processes run now.
func (s *Server) ConnectionCount() int {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return 0
	}
	n := 0
	for _, pid := range children(cmd.Process.Pid) {
		if isSSHD(comm(pid)) {
			n++
		}
	}
	return n
}

// isSSHD: OpenSSH 9.8 and later serve connections from sshd-session.
func isSSHD(name string) bool { return name == "sshd" || name == "sshd-session" }

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// children lists pid's child processes from /proc.
func children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: the fields
		// after the last ')' are fixed.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

func descendants(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
