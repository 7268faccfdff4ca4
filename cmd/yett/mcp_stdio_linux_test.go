//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

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

// With pipes on both sides, as an agent's client starts it, the shim
// carries bytes with pump: stdin and stdout non-blocking while it runs,
// both put back when it exits.
func TestMCPPumpLeavesItsPipesBlocking(t *testing.T) {
	dir, ln := gatewayListener(t)
	go echoEvery(ln)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	defer outW.Close()
	cmd := shimCmd(dir)
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	buf := make([]byte, 256)
	n, err := outR.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), `"method":"ping"`) {
		t.Fatalf("the echo: %q %v", buf[:n], err)
	}
	if !nonblocking(t, inR) || !nonblocking(t, outW) {
		t.Error("the shim waits on a blocking pipe")
	}
	inW.Close()
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit %d after stdin ended", code)
	}
	if nonblocking(t, inR) || nonblocking(t, outW) {
		t.Error("the shim left a pipe non-blocking")
	}
}

// Both ways at once, far more than a pipe or a socket holds: the agent
// writes while the gateway writes, each reading what the other sent as it
// goes. Every byte arrives, in order, in both directions (the shim's
// writes stop short and resume when the far side takes more), and the
// shim exits 1 when the gateway closes.
func TestMCPCarriesLargeStreamsBothWays(t *testing.T) {
	const size = 8 << 20
	pattern := func(seed byte) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = seed + byte(i*7) + byte(i>>13)
		}
		return b
	}
	toGateway, toAgent := pattern(1), pattern(101)
	dir, ln := gatewayListener(t)
	got := make(chan []byte, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(time.Minute))
		read := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(conn, size))
			read <- b
		}()
		conn.Write(toAgent)
		got <- <-read
	}()
	cmd := shimCmd(dir)
	stdin, stdout, _ := startPiped(t, cmd)
	// A shim that loses or holds bytes leaves one side waiting: end it
	// then, so the test fails on what arrived instead of hanging.
	watchdog := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	go func() {
		// Small writes and large ones, as clients do.
		for rest := toGateway; len(rest) > 0; {
			n := min(len(rest), 1+len(rest)%150_000)
			if _, err := stdin.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
	}()
	fromGateway, err := io.ReadAll(stdout) // ends when the shim exits
	if err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, toGateway) {
		t.Errorf("the gateway got %d bytes, not the %d the agent wrote in order", len(b), size)
	}
	if !bytes.Equal(fromGateway, toAgent) {
		t.Errorf("the agent got %d bytes, not the %d the gateway wrote in order", len(fromGateway), size)
	}
	if code := waitExit(t, cmd); code != 1 {
		t.Errorf("exit %d after the gateway closed, want 1", code)
	}
	stdin.Close()
}

// An agent that closes the shim's stdout is done with it: the shim exits
// at its next answer, without an error of its own.
func TestMCPExitsWhenAgentClosesStdout(t *testing.T) {
	dir, ln := gatewayListener(t)
	go echoEvery(ln)
	cmd := shimCmd(dir)
	stdin, stdout, stderr := startPiped(t, cmd)
	defer stdin.Close()
	stdout.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
