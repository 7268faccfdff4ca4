//go:build linux

// Package polkittest runs a real polkit for tests, without touching the
// machine's own system bus: a mount namespace with its own tmpfs on
// /run/dbus and its own polkit actions directory, a system dbus-daemon and
// polkitd (Debian's polkitd 122) inside it, and pkttyagent as the person's
// authentication agent on a pseudo-terminal the test types the password
// into. It needs root (to make the namespace; CI runs as root) and a person
// who is not root (nonroot.Person): polkit always authorizes a root subject.
//
// The bus also listens on a socket outside the namespace (Address), which
// the code under test is pointed at.
// pkttyagent runs inside the namespace: the setuid helper it starts
// (polkit-agent-helper-1) ignores DBUS_SYSTEM_BUS_ADDRESS and dials
// /run/dbus/system_bus_socket, which inside the namespace is this bus.
package polkittest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/internal/testsupport/nonroot"
	"github.com/yettdev/yett/internal/testsupport/ptytest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// Polkit is a running polkitd on a private system bus.
type Polkit struct {
	holder *exec.Cmd
	// Address is the system bus's socket outside the namespace
	// ("unix:path=...").
	Address string
	log     *syncbuf.Buffer
}

// Start runs polkitd with the action files in actionsDir (each must name
// its own action; there is no other action on this bus).
func Start(t testing.TB, actionsDir string) *Polkit {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatal("polkittest needs root to make a mount namespace (CI runs as root)")
	}
	for _, bin := range []string{"/usr/lib/polkit-1/polkitd", "/usr/bin/pkttyagent", "/usr/bin/dbus-daemon"} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s is missing (Debian packages polkitd and dbus; build/scripts/deps.sh installs them)", bin)
		}
	}
	actions, err := filepath.Abs(actionsDir)
	if err != nil {
		t.Fatal(err)
	}
	p := &Polkit{log: &syncbuf.Buffer{}}
	// The bus listens twice: at /run/dbus/system_bus_socket inside the
	// namespace (for polkit's setuid helper) and in a directory everyone
	// may enter outside it (for the code under test, which runs as the
	// person and cannot reach /proc/<holder>/root).
	outside, err := os.MkdirTemp("", "ypolkit")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.Chmod(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(outside, "system_bus_socket")
	conf := filepath.Join(outside, "system.conf")
	if err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/system.conf</include>
  <listen>unix:path=`+sock+`</listen>
</busconfig>
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The holder keeps the namespace alive and runs the bus and polkitd in
	// it; it exits (and they with it) when its stdin closes.
	script := fmt.Sprintf(`set -e
mount -t tmpfs tmpfs /run/dbus
mount --bind %q /usr/share/polkit-1/actions
dbus-daemon --config-file=%q --nofork --nopidfile >/dev/null 2>&1 </dev/null &
bus=$!
for i in $(seq 100); do [ -S /run/dbus/system_bus_socket ] && break; sleep 0.05; done
/usr/lib/polkit-1/polkitd --no-debug >/dev/null 2>&1 </dev/null &
pk=$!
echo ready
cat >/dev/null
kill $pk $bus 2>/dev/null || true
wait`, actions, conf)
	p.holder = exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	in, err := p.holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.holder.Stderr = p.log
	if err := p.holder.Start(); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { p.holder.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.holder.Process.Kill()
			<-done
		}
	})
	ready := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(l)
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-ready:
		if l != "ready" {
			t.Fatalf("the polkit namespace did not start: %q %s", l, p.log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the polkit namespace did not start: %s", p.log.String())
	}
	p.Address = "unix:path=" + sock
	// polkitd registers its name a moment after it starts.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := exec.Command("dbus-send", "--bus="+p.Address, "--print-reply", "--dest=org.freedesktop.DBus",
			"/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.PolicyKit1").CombinedOutput()
		if err == nil && strings.Contains(string(out), "boolean true") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("polkitd did not take its name: %s %s", out, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// Agent is pkttyagent, the person's authentication agent for one process,
// on a terminal the test types into.
type Agent struct {
	cmd    *exec.Cmd
	master *os.File
	screen syncbuf.Buffer
}

// Agent starts pkttyagent as the person for the process pid (its start
// time read from /proc), inside the namespace, and waits until it is
// registered.
func (p *Polkit) Agent(t testing.TB, as *nonroot.User, pid int) *Agent {
	t.Helper()
	start, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	master, slave := ptytest.Open(t)
	if err := os.Chown(slave.Name(), as.UID, as.GID); err != nil {
		t.Fatal(err)
	}
	notifyR, notifyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{master: master}
	// nsenter joins the namespace as root, then setpriv becomes the person:
	// the agent must run as the subject's user.
	a.cmd = exec.Command("nsenter", "-t", strconv.Itoa(p.holder.Process.Pid), "-m", "--",
		"setpriv", "--reuid", strconv.Itoa(as.UID), "--regid", strconv.Itoa(as.GID), "--clear-groups",
		"pkttyagent", "--process", fmt.Sprintf("%d,%d", pid, start), "--notify-fd", "3")
	a.cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + as.Home, "LANG=C.UTF-8"}
	a.cmd.Stdin, a.cmd.Stdout, a.cmd.Stderr = slave, slave, slave
	a.cmd.ExtraFiles = []*os.File{notifyW}
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	notifyW.Close()
	slave.Close()
	go io.Copy(&a.screen, master)
	t.Cleanup(func() {
		a.cmd.Process.Kill()
		a.cmd.Wait()
	})
	// pkttyagent closes the notify fd once it is registered.
	registered := make(chan struct{})
	go func() { io.Copy(io.Discard, notifyR); close(registered) }()
	select {
	case <-registered:
	case <-time.After(20 * time.Second):
		t.Fatalf("pkttyagent did not register: %s", a.screen.String())
	}
	notifyR.Close()
	return a
}

// Answer waits for the password prompt, then for echo to go off (a
// password typed before that is lost now and then), and types password.
func (a *Agent) Answer(t testing.TB, password string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(a.screen.String(), "Password:") {
		if time.Now().After(deadline) {
			t.Fatalf("pkttyagent never asked for the password: %q", a.screen.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		tio, err := unix.IoctlGetTermios(int(a.master.Fd()), unix.TCGETS)
		if err == nil && tio.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pkttyagent's terminal kept echo on")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := a.master.Write([]byte(password + "\n")); err != nil {
		t.Fatal(err)
	}
}

// Screen is what the agent wrote to its terminal.
func (a *Agent) Screen() string { return a.screen.String() }

// StartTime is a process's start time in clock ticks since boot, as polkit
// names a unix-process subject.
func StartTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 20 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}
