//go:build unix

package sshaction

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/internal/testsupport/sshdtest"
)

// lentKey is a SecretSource over a key's PEM that counts its loans.
type lentKey struct {
	pem   []byte
	loans atomic.Int32
}

func (k *lentKey) WithSecret(_ context.Context, use func([]byte) error) error {
	k.loans.Add(1)
	b := append([]byte(nil), k.pem...)
	defer clear(b)
	return use(b)
}

var _ action.SecretSource = (*lentKey)(nil)

type fixture struct {
	srv  *sshdtest.Server
	key  *lentKey
	pair *KeyPair
	host Host
}

func newFixture(t *testing.T, o sshdtest.Options) *fixture {
	t.Helper()
	srv := sshdtest.StartWith(t, o)
	pair, err := GenerateEd25519("yett-test")
	if err != nil {
		t.Fatal(err)
	}
	srv.Authorize(t, pair.Public)
	pin, err := ParsePin(srv.HostKey)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, pair: pair, key: &lentKey{pem: pair.PEM},
		host: Host{ID: "h1", Version: 1, Address: srv.Host, Port: srv.Port, User: srv.User, Pins: []Pin{pin}}}
}

func TestExecOutputExitAndStdin(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	e := New(Config{})
	defer e.CloseIdle()
	ctx := context.Background()

	res, err := e.Exec(ctx, f.host, f.key, Command{Line: "echo out; echo err >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" || !res.Exited || res.ExitCode != 3 || res.Signal != "" {
		t.Fatalf("got %+v", res)
	}
	if want, _ := ParsePin(f.srv.HostKey); res.HostKey != want.Fingerprint() {
		t.Fatalf("host key %q, want %q", res.HostKey, want.Fingerprint())
	}

	in := bytes.Repeat([]byte("stdin line\n"), 10000)
	res, err = e.Exec(ctx, f.host, f.key, Command{Line: "cat", Stdin: in})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Stdout, in) || res.ExitCode != 0 || !res.Exited {
		t.Fatalf("cat gave %d bytes, exit %d", len(res.Stdout), res.ExitCode)
	}
	if !res.Reused {
		t.Fatal("the second command did not reuse the connection")
	}
	if n := f.key.loans.Load(); n != 1 {
		t.Fatalf("the key was lent %d times for one connection", n)
	}

	// A command that does not read its input still ends with its status.
	res, err = e.Exec(ctx, f.host, f.key, Command{Line: "true", Stdin: bytes.Repeat([]byte("x"), 1<<20)})
	if err != nil || !res.Exited || res.ExitCode != 0 {
		t.Fatalf("true with unread stdin: %+v, %v", res, err)
	}
}

func TestExecSignalIsReported(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	e := New(Config{NoReuse: true})
	res, err := e.Exec(context.Background(), f.host, f.key, Command{Line: "kill -TERM $$"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != "TERM" || res.Exited {
		t.Fatalf("got %+v, want signal TERM", res)
	}
}

func TestExecOutputFloodIsCappedAndEnded(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	const limit = 256 << 10
	e := New(Config{MaxOutputBytes: limit, NoReuse: true})
	res, err := e.Exec(context.Background(), f.host, f.key, Command{Line: "yes flood & yes flood >&2", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Ended != EndedOutputCap {
		t.Fatalf("flood not flagged: truncated=%v ended=%q", res.Truncated, res.Ended)
	}
	if n := len(res.Stdout) + len(res.Stderr); n != limit {
		t.Fatalf("kept %d bytes, want the cap %d", n, limit)
	}
}

// remoteProbe is a command that records its shell's pid, then sleeps and
// would leave a marker if it were not ended. The pid file appears whole (a
// rename), so a test that waits for it never reads it half written.
func remoteProbe(dir string) string {
	pid := filepath.Join(dir, "pid")
	return "echo $$ > " + pid + ".tmp; mv " + pid + ".tmp " + pid + "; sleep 30; touch " + filepath.Join(dir, "after")
}

func waitGone(t *testing.T, dir string) {
	t.Helper()
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pid = p
			if syscall.Kill(pid, 0) != nil {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the remote command never recorded its pid")
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("the remote command (pid %d) still runs", pid)
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); err == nil {
		t.Fatal("the remote command ran past its end")
	}
}

func TestExecTimeoutEndsTheCommand(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	e := New(Config{})
	dir := f.srv.Scratch(t)
	res, err := e.Exec(context.Background(), f.host, f.key, Command{Line: remoteProbe(dir), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != EndedTimeout {
		t.Fatalf("ended %q, want timeout", res.Ended)
	}
	waitGone(t, dir)
}

func TestExecCancelEndsTheCommandAtOnce(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	e := New(Config{})
	dir := f.srv.Scratch(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "pid")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := e.Exec(ctx, f.host, f.key, Command{Line: remoteProbe(dir), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != EndedCancelled {
		t.Fatalf("ended %q, want cancelled", res.Ended)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	waitGone(t, dir)
}

func TestExecChangedHostKeyIsRefusedBeforeAuthentication(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	other, err := GenerateEd25519("other")
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := ParsePin(strings.Join(strings.Fields(other.Public)[:2], " "))
	h := f.host
	h.Pins = []Pin{wrong}
	_, err = New(Config{}).Exec(context.Background(), h, f.key, Command{Line: "true"})
	var hk *HostKeyError
	if !errors.As(err, &hk) || !errors.Is(err, ErrNotStarted) || !errors.Is(err, ErrHostKeyChanged) {
		t.Fatalf("err %v, want a HostKeyError that says nothing ran", err)
	}
	if want, _ := ParsePin(f.srv.HostKey); hk.Fingerprint != want.Fingerprint() || hk.Presented.String() != want.String() {
		t.Fatalf("presented %s, want the server's %s", hk.Fingerprint, want.Fingerprint())
	}
	if n := f.key.loans.Load(); n != 0 {
		t.Fatalf("the key was lent %d times to a host that is not the pinned one", n)
	}
}

func TestExecPinsLimitHostKeyAlgorithms(t *testing.T) {
	// The server has an RSA host key: pinned, it is negotiated (with SHA-2
	// signatures); an Ed25519 pin alone must not make the client accept it.
	f := newFixture(t, sshdtest.Options{HostKeyType: "rsa"})
	res, err := New(Config{}).Exec(context.Background(), f.host, f.key, Command{Line: "echo ok"})
	if err != nil || string(res.Stdout) != "ok\n" {
		t.Fatalf("rsa host: %v %+v", err, res)
	}
	if got := HostKeyAlgorithms(f.host.Pins); strings.Join(got, ",") != "rsa-sha2-512,rsa-sha2-256" {
		t.Fatalf("algorithms %v", got)
	}
	other, _ := GenerateEd25519("x")
	wrong, _ := ParsePin(strings.Join(strings.Fields(other.Public)[:2], " "))
	h := f.host
	h.Pins = []Pin{wrong}
	if _, err := New(Config{}).Exec(context.Background(), h, f.key, Command{Line: "true"}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("an ed25519 pin accepted an rsa host: %v", err)
	}
}

func TestExecUnauthorizedKey(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	f.srv.Revoke(t)
	_, err := New(Config{}).Exec(context.Background(), f.host, f.key, Command{Line: "true"})
	if !errors.Is(err, ErrAuth) || !errors.Is(err, ErrNotStarted) {
		t.Fatalf("err %v, want ErrAuth", err)
	}
}

func TestExecNoPinsNoConnection(t *testing.T) {
	h := Host{ID: "x", Address: "127.0.0.1", Port: 1, User: "u"}
	if _, err := New(Config{}).Exec(context.Background(), h, &lentKey{}, Command{Line: "true"}); !errors.Is(err, ErrNoPins) {
		t.Fatalf("err %v", err)
	}
}

func TestExecBrokenConnectionIsTransport(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	e := New(Config{})
	dir := f.srv.Scratch(t)
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "pid")); err == nil {
				f.srv.KillSessions(t)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := e.Exec(context.Background(), f.host, f.key, Command{Line: "echo started; " + remoteProbe(dir), Timeout: time.Minute})
	if !errors.Is(err, ErrTransport) || errors.Is(err, ErrNotStarted) {
		t.Fatalf("err %v, want ErrTransport", err)
	}
	if res == nil {
		t.Fatal("no partial result")
	}
}

func TestExecGivesTheCommandNothingOfYett(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	t.Setenv("YETT_LEAK_CANARY", "leak-7c1f")
	t.Setenv("LANG", "yett-canary-lang")
	res, err := New(Config{}).Exec(context.Background(), f.host, f.key, Command{Line: "env"})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	for _, bad := range []string{"leak-7c1f", "yett-canary-lang", "SSH_AUTH_SOCK", "OPENSSH PRIVATE KEY", keyBody(f.pair.PEM)} {
		if strings.Contains(out, bad) {
			t.Errorf("the remote environment holds %q", bad)
		}
	}
}

func keyBody(pem []byte) string {
	lines := strings.Split(string(pem), "\n")
	return lines[1]
}

func TestProbeTrustsOnlyAfterAuthentication(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	h := f.host
	h.Pins = nil
	pin, err := Probe(context.Background(), h, f.key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pin.String() != f.srv.HostKey {
		t.Fatalf("probe pinned %s, server has %s", pin.String(), f.srv.HostKey)
	}
	f.srv.Revoke(t)
	if pin, err := Probe(context.Background(), h, f.key, 0); !errors.Is(err, ErrAuth) || pin.key != nil {
		t.Fatalf("a failed authentication gave pin %v, err %v", pin, err)
	}
}

func TestCloseIdleEndsReuse(t *testing.T) {
	f := newFixture(t, sshdtest.Options{})
	e := New(Config{})
	ctx := context.Background()
	if _, err := e.Exec(ctx, f.host, f.key, Command{Line: "true"}); err != nil {
		t.Fatal(err)
	}
	e.CloseIdle()
	res, err := e.Exec(ctx, f.host, f.key, Command{Line: "true"})
	if err != nil || res.Reused {
		t.Fatalf("reused after CloseIdle: %+v %v", res, err)
	}
	// Another version of the host record never gets this connection.
	h := f.host
	h.Version++
	res, err = e.Exec(ctx, h, f.key, Command{Line: "true"})
	if err != nil || res.Reused {
		t.Fatalf("a new host version reused a connection: %+v %v", res, err)
	}
}

func TestExecSaysWhenTheHostRefusesTheHangup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a root login needs the test to run as root (CI does)")
	}
	f := newFixture(t, sshdtest.Options{Root: true})
	res, err := New(Config{}).Exec(context.Background(), f.host, f.key, Command{Line: "sleep 5", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != EndedTimeout || !res.HangupRefused {
		t.Fatalf("ended %q, hangup refused %v: OpenSSH refuses to signal a root login's command, and the result must say so", res.Ended, res.HangupRefused)
	}
}
