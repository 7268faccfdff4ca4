package rpcframe

import (
	"context"
	"errors"
	"io"
	"strings"
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

// TestConnectionBoundsHeldWork: calls beyond the in-flight bound (in count
// or in bytes) are answered BUSY with their own id and never reach Read;
// answering a call frees its place.
func TestConnectionBoundsHeldWork(t *testing.T) {
	srv, cli := socketPair(t)
	var busy int
	var mu sync.Mutex
	conn, err := (&Transport{Conn: srv, Limits: Limits{MaxInFlight: 2, MaxHeldBytes: 200}, OnReject: func(r *Rejection) {
		if errors.Is(r.Reason, ErrBusy) {
			mu.Lock()
			busy++
			mu.Unlock()
		}
	}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, conn: cli, sc: newScanner(cli)}
	read := func() *jsonrpc.Request {
		t.Helper()
		msg, err := conn.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return msg.(*jsonrpc.Request)
	}
	go io.WriteString(cli, `{"jsonrpc":"2.0","id":1,"method":"a"}`+"\n"+`{"jsonrpc":"2.0","method":"notifications/x"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"b"}`+"\n"+`{"jsonrpc":"2.0","id":3,"method":"c"}`+"\n")
	first, second := read(), read()
	if first.Method != "a" || second.Method != "notifications/x" {
		t.Fatalf("got %s %s", first.Method, second.Method)
	}
	if read().Method != "b" {
		t.Fatal("b did not arrive")
	}
	r, ok := c.recv()
	if !ok || string(r["id"]) != "3" || !strings.Contains(string(r["error"]), "BUSY") {
		t.Fatalf("third call: %v", r)
	}
	// Answer 1: its place is free again; a call whose frame would pass the
	// byte bound is still refused.
	if err := conn.Write(context.Background(), &jsonrpc.Response{ID: first.ID, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	c.recv()
	go io.WriteString(cli, `{"jsonrpc":"2.0","id":4,"method":"d","params":{"x":"`+strings.Repeat("x", 200)+`"}}`+"\n"+
		`{"jsonrpc":"2.0","id":5,"method":"e"}`+"\n")
	if r, ok := c.recv(); !ok || string(r["id"]) != "4" || !strings.Contains(string(r["error"]), "BUSY") {
		t.Fatalf("oversized held bytes: %v", r)
	}
	if read().Method != "e" {
		t.Fatal("e did not arrive")
	}
	if calls, _ := conn.(*Connection).Held(); calls != 2 {
		t.Fatalf("held %d calls", calls)
	}
	mu.Lock()
	defer mu.Unlock()
	if busy != 2 {
		t.Fatalf("OnReject saw %d BUSY", busy)
	}
}
