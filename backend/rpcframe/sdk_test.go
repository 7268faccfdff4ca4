package rpcframe

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "rpcframe-test", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

// socketPair returns both ends of a real Unix socket connection.
func socketPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

type rawClient struct {
	t    *testing.T
	conn net.Conn
	sc   *bufio.Scanner
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads one reply line; ok is false when the session ended instead.
func (c *rawClient) recv() (reply map[string]json.RawMessage, ok bool) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if !c.sc.Scan() {
		return nil, false
	}
	if err := json.Unmarshal(c.sc.Bytes(), &reply); err != nil {
		c.t.Fatalf("reply %q: %v", c.sc.Text(), err)
	}
	return reply, true
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
const callEcho = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still-alive"}}}`

func startSession(t *testing.T, transport func(net.Conn) mcp.Transport) *rawClient {
	t.Helper()
	srvConn, cliConn := socketPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := newServer().Connect(ctx, transport(srvConn), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := &rawClient{t: t, conn: cliConn, sc: newScanner(cliConn)}
	c.send(initialize)
	if r, ok := c.recv(); !ok || string(r["id"]) != "1" || r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	c.send(initialized)
	return c
}

// TestBatchDoesNotKillSDKSession sends hostile frames through Transport to a
// real go-sdk server session and checks each gets an error reply and the
// next request is still answered.
func TestBatchDoesNotKillSDKSession(t *testing.T) {
	c := startSession(t, func(conn net.Conn) mcp.Transport { return &Transport{Conn: conn} })
	hostile := []string{
		`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		`{"jsonrpc":"2.0","id":6,`,
		`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`,
	}
	wantIDs := []string{"null", "null", "null", "7"}
	for i, h := range hostile {
		c.send(h)
		r, ok := c.recv()
		if !ok {
			t.Fatalf("session ended after hostile frame %d", i)
		}
		if string(r["id"]) != wantIDs[i] || r["error"] == nil {
			t.Fatalf("frame %d: reply %v, want error with id %s", i, r, wantIDs[i])
		}
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/bogus","params":1}`) // invalid notification: no reply
	c.send(callEcho)
	r, ok := c.recv()
	if !ok || string(r["id"]) != "4" || !strings.Contains(string(r["result"]), "still-alive") {
		t.Fatalf("request after hostile frames: %v (ok=%v)", r, ok)
	}
}

// TestBatchKillsUnwrappedSDKSession is the control: the same batch sent to
// the SDK's own newline transport ends the session, which is why the
// gateway must wrap the connection.
func TestBatchKillsUnwrappedSDKSession(t *testing.T) {
	c := startSession(t, func(conn net.Conn) mcp.Transport {
		return &mcp.IOTransport{Reader: conn, Writer: conn}
	})
	c.send(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`)
	// The session may already be gone when the next line is written: a
	// refused write is the same finding as a closed read.
	if _, err := io.WriteString(c.conn, callEcho+"\n"); err != nil {
		return
	}
	for {
		r, ok := c.recv()
		if !ok {
			return // session gone, as expected
		}
		if string(r["id"]) == "4" {
			t.Fatalf("unwrapped SDK survived a batch; the control no longer shows the risk: %v", r)
		}
	}
}

func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	return sc
}
