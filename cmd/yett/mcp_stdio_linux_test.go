//go:build linux

package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/internal/testsupport/ptytest"
)

// nonblocking reads the descriptor's mode without changing it (f.Fd()
// would make it blocking).
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	if err := rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return flags&unix.O_NONBLOCK != 0
}

// The shim waits for its stdin and stdout in the runtime's poller, which
// needs them non-blocking, and leaves them as it found them: a pipe it was
// given is blocking again once it exits (whoever reads that pipe next
// expects what it gave), and a terminal, whose mode the shell and every
// other program on it share, is never changed at all.
func TestMCPLeavesItsStdioBlocking(t *testing.T) {
	dir, ln := gatewayListener(t)
	go echoEvery(ln)

	// stdin a pipe the test keeps open too, stdout a terminal.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	master, slave := ptytest.Open(t)
	cmd := shimCmd(dir)
	cmd.Stdin, cmd.Stdout = r, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child was given them blocking (exec takes each by its Fd).
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	buf := make([]byte, 256)
	n, err := master.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), `"method":"ping"`) {
		t.Fatalf("the echo through a terminal stdout: %q %v", buf[:n], err)
	}
	// While the shim runs its stdin pipe waits in the poller; the
	// terminal does not.
	if !nonblocking(t, r) {
		t.Error("the shim reads its stdin pipe in a blocking mode")
	}
	if nonblocking(t, slave) {
		t.Error("the shim made the terminal it writes to non-blocking")
	}
	w.Close() // the agent is done: the shim exits
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit %d after stdin ended", code)
	}
	if nonblocking(t, r) {
		t.Error("the shim left its stdin pipe non-blocking")
	}
	if nonblocking(t, slave) {
		t.Error("the shim left the terminal non-blocking")
	}
}
