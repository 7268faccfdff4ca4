package lockwatch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// These helpers run real dbus-daemon processes (Debian package dbus-daemon)
// and emit signals from other processes: dbus-send (dbus-bin) for the
// session bus, and this test binary re-executed as a fake logind for the
// system bus, because only the owner of org.freedesktop.login1 can send
// signals our subscription accepts.

const ourSession = dbus.ObjectPath("/org/freedesktop/login1/session/_31")

// systemBusConfig is a system-style bus: nobody may own names except
// org.freedesktop.login1, which is what the fake logind claims.
const systemBusConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <auth>EXTERNAL</auth>
  <listen>unix:path=%s</listen>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <allow own="org.freedesktop.login1"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
`

// bus is a running dbus-daemon.
type bus struct {
	addr string
	cmd  *exec.Cmd
}

// stop kills the daemon; safe to call twice.
func (b *bus) stop() {
	if b.cmd.ProcessState == nil {
		b.cmd.Process.Kill()
		b.cmd.Wait()
	}
}

// startSessionBus runs `dbus-daemon --session` listening at dir/bus, the
// layout of $XDG_RUNTIME_DIR/bus.
func startSessionBus(t testing.TB, dir string) *bus {
	t.Helper()
	return startDaemon(t, "--session", "--address=unix:path="+filepath.Join(dir, "bus"))
}

// startSystemBus runs a dbus-daemon with systemBusConfig.
func startSystemBus(t testing.TB) *bus {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "system.conf")
	sock := filepath.Join(dir, "system_bus_socket")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, systemBusConfig, sock), 0o600); err != nil {
		t.Fatal(err)
	}
	return startDaemon(t, "--config-file="+cfg)
}

func startDaemon(t testing.TB, args ...string) *bus {
	t.Helper()
	cmd := exec.Command("dbus-daemon", append(args, "--nofork", "--print-address=1")...)
	// The daemon complains harmlessly (fd limits when not root); show its
	// words only when they might explain a failure.
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dbus-daemon %v stderr:\n%s", args, stderr.String())
		}
	})
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbus-daemon (Debian package dbus-daemon): %v", err)
	}
	b := &bus{cmd: cmd}
	t.Cleanup(b.stop)
	addr := readLine(t, bufio.NewReader(out), "dbus-daemon address")
	go io.Copy(io.Discard, out)
	b.addr = addr
	return b
}

// readLine reads one line or fails the test after a generous bound, so a
// wedged child fails the test instead of hanging it.
func readLine(t testing.TB, r *bufio.Reader, what string) string {
	t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		l, err := r.ReadString('\n')
		ch <- result{strings.TrimSpace(l), err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			t.Fatalf("%s: %v", what, res.err)
		}
		return res.line
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no answer", what)
		return ""
	}
}

// dbusSend emits one signal on addr from a dbus-send process.
func dbusSend(t *testing.T, addr string, path, member string, args ...string) {
	t.Helper()
	cmdArgs := append([]string{"--bus=" + addr, "--type=signal", path, member}, args...)
	if out, err := exec.Command("dbus-send", cmdArgs...).CombinedOutput(); err != nil {
		t.Fatalf("dbus-send (Debian package dbus-bin) %v: %v\n%s", cmdArgs, err, out)
	}
}

// fakeLogind is this test binary running runFakeLogind in a child process.
type fakeLogind struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startFakeLogind owns org.freedesktop.login1 on addr. With noSession,
// GetSession fails the way logind does for a process outside any session.
func startFakeLogind(t *testing.T, addr string, noSession bool) *fakeLogind {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKWATCH_FAKE_LOGIND="+addr)
	if noSession {
		cmd.Env = append(cmd.Env, "LOCKWATCH_FAKE_NOSESSION=1")
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &fakeLogind{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	if l := readLine(t, f.out, "fake logind"); l != "ready" {
		t.Fatalf("fake logind: %q", l)
	}
	return f
}

// do sends one command and waits until the signal has been handed to the
// bus daemon (see runFakeLogind).
func (f *fakeLogind) do(command string) {
	f.t.Helper()
	fmt.Fprintln(f.in, command)
	if l := readLine(f.t, f.out, "fake logind "+command); l != "ok" {
		f.t.Fatalf("fake logind %q: %s", command, l)
	}
}

// fakeManager is the part of org.freedesktop.login1.Manager we call.
type fakeManager struct{ noSession bool }

func (m fakeManager) GetSession(id string) (dbus.ObjectPath, *dbus.Error) {
	if m.noSession || id != "auto" {
		return "", dbus.NewError("org.freedesktop.login1.NoSessionForPID", []any{"Caller does not belong to any known session"})
	}
	return ourSession, nil
}

// runFakeLogind is the child process: it owns org.freedesktop.login1 on one
// connection and keeps a second, nameless "intruder" connection, then emits
// signals on command from stdin. After each emit it makes a round trip to
// the daemon on the same connection: the daemon handles one connection's
// messages in order, so when the reply arrives the signal has been routed.
func runFakeLogind(addr string, noSession bool) error {
	owner, err := dbus.Connect(addr)
	if err != nil {
		return err
	}
	intruder, err := dbus.Connect(addr)
	if err != nil {
		return err
	}
	if err := owner.Export(fakeManager{noSession}, login1Path, login1Manager); err != nil {
		return err
	}
	reply, err := owner.RequestName(login1Name, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		return fmt.Errorf("own %s: %v %v", login1Name, reply, err)
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		conn := owner
		var err error
		switch {
		case len(f) == 2 && f[0] == "sleep":
			err = owner.Emit(login1Path, login1Manager+".PrepareForSleep", f[1] == "true")
		case len(f) == 2 && f[0] == "forge-sleep":
			conn = intruder
			err = intruder.Emit(login1Path, login1Manager+".PrepareForSleep", f[1] == "true")
		case len(f) == 2 && f[0] == "lock":
			err = owner.Emit(dbus.ObjectPath(f[1]), login1Session+".Lock")
		case len(f) == 2 && f[0] == "unlock":
			err = owner.Emit(dbus.ObjectPath(f[1]), login1Session+".Unlock")
		case len(f) == 3 && f[0] == "hint":
			err = owner.Emit(dbus.ObjectPath(f[1]), propertiesSignal, login1Session,
				map[string]dbus.Variant{"LockedHint": dbus.MakeVariant(f[2] == "true")}, []string{})
		default:
			err = fmt.Errorf("unknown command %q", sc.Text())
		}
		if err == nil {
			var id string
			err = conn.BusObject().Call("org.freedesktop.DBus.GetId", 0).Store(&id)
		}
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println("ok")
	}
	return sc.Err()
}

func TestMain(m *testing.M) {
	if addr := os.Getenv("LOCKWATCH_FAKE_LOGIND"); addr != "" {
		if err := runFakeLogind(addr, os.Getenv("LOCKWATCH_FAKE_NOSESSION") != ""); err != nil {
			fmt.Fprintln(os.Stderr, "fake logind:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
