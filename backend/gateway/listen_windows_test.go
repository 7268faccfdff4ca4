//go:build windows

package gateway

// These run under Wine in make test (build/scripts/wine.sh), and on Windows.

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"

	"github.com/yettdev/yett/backend/procid"
	"github.com/yettdev/yett/internal/testsupport/wintest"
)

func acceptOne(t *testing.T, ln net.Listener) <-chan net.Conn {
	t.Helper()
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(ch)
			return
		}
		ch <- c
	}()
	return ch
}

// The pipe carries bytes both ways, the kernel names the client, and Dial
// accepts a server of our own user.
func TestPipeListenDialRoundTrip(t *testing.T) {
	dir := wintest.TempDir(t)
	ln, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := acceptOne(t, ln)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer sc.Close()
	peer, err := procid.CheckPipeClient(windows.Handle(sc.(pipeHandle).Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	if peer.PID != os.Getpid() {
		t.Errorf("pipe client pid %d, want %d", peer.PID, os.Getpid())
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(sc, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v", buf, err)
	}
}

// The pipe's DACL has exactly one entry, for our own SID.
func TestPipeDACLOwnerOnly(t *testing.T) {
	dir := wintest.TempDir(t)
	ln, err := listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := acceptOne(t, ln)
	c, err := Dial(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if sc, ok := <-accepted; ok {
		defer sc.Close()
	}
	sd, err := windows.GetSecurityInfo(windows.Handle(c.(pipeHandle).Fd()), windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if dacl.AceCount != 1 {
		t.Fatalf("DACL has %d entries: %s", dacl.AceCount, sd)
	}
	var ace *windows.ACCESS_ALLOWED_ACE
	if err := windows.GetAce(dacl, 0, &ace); err != nil {
		t.Fatal(err)
	}
	sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
	me, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || !sid.Equals(me.User.Sid) {
		t.Errorf("DACL entry is not an allow for our SID: %s", sd)
	}
}

// A pipe of our name made first by someone else is refused, never served.
func TestPipeSquatterFailsLoudlyOnRealWindows(t *testing.T) {
	dir := wintest.TempDir(t)
	name, err := pipeFor(dir)
	if err != nil {
		t.Fatal(err)
	}
	squat, err := winio.ListenPipe(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer squat.Close()
	ln, err := listen(dir)
	if err == nil {
		ln.Close()
		t.Fatal("listen served through an existing pipe")
	}
	if !errors.Is(err, ErrAddressTaken) {
		t.Errorf("err = %v, want ErrAddressTaken", err)
	}
}

// With no gateway, Dial fails at once (the shim then answers "not running").
func TestPipeDialNoGateway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c, err := Dial(ctx, wintest.TempDir(t)); err == nil {
		c.Close()
		t.Fatal("dialed a gateway that does not exist")
	}
	if ctx.Err() != nil {
		t.Error("Dial waited for a pipe that does not exist")
	}
}

// A second gateway for the same runtime directory sees the lock.
func TestLockExclusiveWindows(t *testing.T) {
	path := wintest.TempDir(t) + `\gateway.lock`
	f, err := takeLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseLock(f)
	if g, err := takeLock(path); !errors.Is(err, ErrAlreadyRunning) {
		if g != nil {
			releaseLock(g)
		}
		t.Errorf("second takeLock err = %v, want ErrAlreadyRunning", err)
	}
}
