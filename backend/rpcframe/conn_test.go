package rpcframe

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestConnectionRejectsAndDelivers checks the wrapper alone: rejected
// frames are answered on the connection and reported to OnReject, clean
// ones come out of Read, and Close unblocks a pending Read.
func TestConnectionRejectsAndDelivers(t *testing.T) {
	srv, cli := socketPair(t)
	var mu sync.Mutex
	var reasons []error
	conn, err := (&Transport{Conn: srv, OnReject: func(r *Rejection) {
		mu.Lock()
		reasons = append(reasons, r.Reason)
		mu.Unlock()
	}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	go io.WriteString(cli, "[1]\n{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":5}\n{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"ok\"}\n")
	msg, err := conn.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if req := msg.(*jsonrpc.Request); req.Method != "ok" || req.ID.Raw() != "q" {
		t.Fatalf("got %+v", req)
	}
	c := &rawClient{t: t, conn: cli, sc: newScanner(cli)}
	if r, ok := c.recv(); !ok || string(r["id"]) != "null" || r["error"] == nil {
		t.Fatalf("batch reply %v", r)
	}
	mu.Lock()
	if len(reasons) != 2 || !errors.Is(reasons[0], ErrBatch) || !errors.Is(reasons[1], ErrInvalidRequest) {
		t.Fatalf("OnReject saw %v", reasons)
	}
	mu.Unlock()
	if err := conn.Write(context.Background(), &jsonrpc.Response{ID: msg.(*jsonrpc.Request).ID, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if r, ok := c.recv(); !ok || string(r["id"]) != `"q"` {
		t.Fatalf("response %v", r)
	}

	readErr := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		readErr <- err
	}()
	time.Sleep(20 * time.Millisecond)
	conn.Close()
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("Read after Close returned a message")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	if err := conn.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
