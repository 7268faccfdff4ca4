//go:build unix

// Package pgtest runs a real PostgreSQL server on 127.0.0.1 for tests: its
// own cluster in a temporary directory, an unprivileged port, password
// (SCRAM) authentication over TCP and a superuser whose password only the
// test knows. Nothing of the machine's own PostgreSQL is read or changed.
//
// PostgreSQL 15 or later must be installed (Debian's postgresql package;
// build/scripts/deps.sh installs it for tests). Start fails the test when
// it is missing: tests are never skipped for a missing part.
//
// Neither initdb nor postgres runs as root: when the test runs as root the
// server runs as the postgres account, in a directory handed to it. initdb
// runs once per test binary; every Start copies that cluster, which takes a
// tenth of the time. Shared starts one cluster for a whole test binary,
// where each test makes a database of its own.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// Superuser is the cluster's superuser role.
const Superuser = "postgres"

// Server is a running PostgreSQL cluster.
type Server struct {
	Host string // 127.0.0.1
	Port int
	// Password is the superuser's password.
	Password string
	// Dir holds the cluster (Dir/data) and its socket directory.
	Dir string

	cred *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	log  *syncbuf.Buffer
	done chan struct{}
}

// Start starts a fresh cluster and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.remove)
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

var (
	sharedMu  sync.Mutex
	sharedSrv *Server
)

// Shared is one cluster for every test of the test binary that asks for
// it (each makes its own database and roles in it): starting a cluster
// takes a second or two. The package's TestMain calls StopShared after
// its tests. A test that stops or restarts its server uses Start.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv != nil {
		return sharedSrv
	}
	s, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.start(); err != nil {
		s.remove()
		t.Fatal(err)
	}
	sharedSrv = s
	return s
}

// StopShared stops the shared cluster, if one was started, and removes it.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv != nil {
		sharedSrv.Stop()
		sharedSrv.remove()
		sharedSrv = nil
	}
}

func newServer() (*Server, error) {
	tpl, err := template()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "yett-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", Password: tpl.password, Dir: dir, cred: tpl.cred}
	fail := func(err error) (*Server, error) { s.remove(); return nil, err }
	if err := s.own(dir); err != nil {
		return fail(err)
	}
	if out, err := exec.Command("cp", "-a", tpl.dir, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: copying the template cluster: %v: %s", err, out))
	}
	if err := os.Mkdir(filepath.Join(dir, "sock"), 0o700); err != nil {
		return fail(err)
	}
	if err := s.own(filepath.Join(dir, "sock")); err != nil {
		return fail(err)
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	s.Port = port
	return s, nil
}

func (s *Server) remove() { os.RemoveAll(s.Dir) }

// URL is a connection URL for role with password on database db ("" is
// the superuser's own database).
func (s *Server) URL(role, password, db string) string {
	if db == "" {
		db = Superuser
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(role, password), Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), Path: "/" + db}
	q := url.Values{"sslmode": {"disable"}}
	u.RawQuery = q.Encode()
	return u.String()
}

// SuperuserURL connects as the superuser to database db.
func (s *Server) SuperuserURL(db string) string { return s.URL(Superuser, s.Password, db) }

// Stop stops the server (a fast shutdown: SIGINT) and waits for it. Safe to
// call twice; Restart starts it again on the same port and data.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// Restart starts a stopped server again, on the same port and data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	running := s.cmd != nil
	s.mu.Unlock()
	if running {
		t.Fatal("pgtest: Restart of a server that runs")
	}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// Log is what the server wrote so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

func (s *Server) start() error {
	log := &syncbuf.Buffer{}
	cmd := exec.Command(filepath.Join(binDir(), "postgres"), "-D", filepath.Join(s.Dir, "data"),
		"-c", "listen_addresses="+s.Host, "-p", strconv.Itoa(s.Port), "-k", filepath.Join(s.Dir, "sock"),
		"-c", "fsync=off", "-c", "max_connections=1000", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.log = cmd, done, log
	s.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return fmt.Errorf("pgtest: postgres exited at start:\n%s", log.String())
		default:
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), time.Second)
		if err == nil {
			c.Close()
			if s.ready() {
				return nil
			}
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("pgtest: postgres did not accept connections in 30 s:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ready: the server answers a query (it accepts TCP before it finished
// starting up, and answers "the database system is starting up" then).
func (s *Server) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir(), "pg_isready"), "-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", Superuser, "-q")
	return cmd.Run() == nil
}

func (s *Server) own(path string) error {
	if s.cred == nil {
		return nil
	}
	return os.Chown(path, int(s.cred.Uid), int(s.cred.Gid))
}

// binDir finds the newest installed PostgreSQL's binaries (Debian keeps
// them out of PATH, under /usr/lib/postgresql/<major>/bin).
func binDir() string {
	if d := os.Getenv("YETT_PG_BIN"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	for _, d := range dirs {
		if major(d) >= 15 {
			return d
		}
	}
	return ""
}

func major(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// tpl is the cluster initdb made once for this test binary.
type tpl struct {
	dir      string
	password string
	cred     *syscall.Credential
}

var (
	tplOnce sync.Once
	tplVal  tpl
	tplErr  error
)

func template() (tpl, error) {
	tplOnce.Do(func() { tplVal, tplErr = makeTemplate() })
	return tplVal, tplErr
}

func makeTemplate() (tpl, error) {
	bin := binDir()
	if bin == "" {
		return tpl{}, errors.New("pgtest: PostgreSQL 15 or later is not installed (/usr/lib/postgresql/*/bin): run build/scripts/deps.sh test, which installs Debian's postgresql package")
	}
	var t tpl
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return tpl{}, fmt.Errorf("pgtest: running as root needs the postgres account to run the server (Debian's postgresql package makes it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		t.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	pw := make([]byte, 16)
	rand.Read(pw)
	t.password = hex.EncodeToString(pw)
	// Left for the test binary's life: every Start copies it. The process
	// exits soon after its tests; /tmp is the system's to clean.
	base, err := os.MkdirTemp("", "yett-pgtpl-")
	if err != nil {
		return tpl{}, err
	}
	chown := func(p string) error {
		if t.cred == nil {
			return nil
		}
		return os.Chown(p, int(t.cred.Uid), int(t.cred.Gid))
	}
	pwFile := filepath.Join(base, "pw")
	if err := os.WriteFile(pwFile, []byte(t.password+"\n"), 0o600); err != nil {
		return tpl{}, err
	}
	if err := chown(base); err != nil {
		return tpl{}, err
	}
	if err := chown(pwFile); err != nil {
		return tpl{}, err
	}
	t.dir = filepath.Join(base, "data")
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", t.dir, "-U", Superuser, "--auth-local=trust",
		"--auth-host=scram-sha-256", "--pwfile="+pwFile, "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: t.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return tpl{}, fmt.Errorf("pgtest: initdb: %v: %s", err, out)
	}
	os.Remove(pwFile)
	return t, nil
}

// freePort asks the kernel for a free port on loopback. Another process
// may take it before postgres binds it; start then fails with the server's
// log, which names the port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
