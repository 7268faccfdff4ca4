//go:build unix

package action

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestCancelDropsUnsentBody: a request cancelled while its body is still
// being sent (the vault locked) stops at once: the target reads little
// more than what was in its own small receive buffer, not the megabytes
// the kernel had queued on the sending side.
func TestCancelDropsUnsentBody(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var read atomic.Int64
	started, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 16<<10)
		for {
			n, err := c.Read(buf)
			if read.Add(int64(n)) == int64(n) && n > 0 {
				close(started)
			}
			if err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ex := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	const size = 8 << 20
	errc := make(chan error, 1)
	go func() {
		_, err := ex.Do(ctx, Request{Method: "POST", URL: "http://" + ln.Addr().String() + "/", Body: bytes.Repeat([]byte("x"), size)}, credFor(canary, false))
		errc <- err
	}()
	<-started
	time.Sleep(100 * time.Millisecond)
	cancel()
	atCancel := read.Load()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled request succeeded")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the target's connection did not end")
	}
	if later := read.Load() - atCancel; later > 256<<10 {
		t.Fatalf("the target read %d bytes after the cancel (%d of %d)", later, read.Load(), size)
	}
}
