package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/rpcframe"
	"github.com/yettdev/yett/backend/userdir"
)

func init() {
	commands["mcp"] = command{
		summary: "MCP shim for agents: pipe stdio to the running Yett gateway",
		run:     runMCP,
	}
}

// gatewaySocketName is the gateway's socket inside userdir.RuntimeDir on
// Unix (tests put a stub gateway there); on Windows the gateway is a named
// pipe derived from the same directory, and gateway.Dial knows both.
const gatewaySocketName = gateway.SocketName

// notRunningMessage is what the agent (and through it the person) reads
// when there is no gateway to talk to.
const notRunningMessage = "Yett is not running: start the Yett app or `yett serve`, then restart this agent"

// codeNotRunning is a JSON-RPC implementation-defined server error.
const codeNotRunning = -32000

var errNotRunning = errors.New("mcp: " + notRunningMessage)

// runMCP is the shim the agent's MCP client starts. It is a dumb pipe on
// purpose: the gateway identifies the agent from the kernel and applies
// every rule, so the shim holds no state, retries nothing, queues nothing
// and writes nothing to stdout but the gateway's bytes. It logs to stderr
// only, and ends as soon as either side closes.
func runMCP(ctx context.Context, env *Env, args []string) error {
	if len(args) != 0 {
		return withExitCode(2, errors.New("mcp: takes no arguments; configure the agent to run `yett mcp`"))
	}
	// Two copies, one message at a time each: a second processor only
	// spins the scheduler awake on every message, which costs the agent's
	// machine CPU for nothing.
	runtime.GOMAXPROCS(1)
	dir, err := userdir.RuntimeDir(env.Getenv)
	if err != nil {
		return answerNotRunning(env, err)
	}
	conn, err := gateway.Dial(ctx, dir)
	if err != nil {
		return answerNotRunning(env, err)
	}
	return pipe(ctx, env, conn)
}

// pipe copies stdin to the gateway and the gateway to stdout until one
// side ends.
func pipe(ctx context.Context, env *Env, conn net.Conn) error {
	defer conn.Close()
	stdinDone := make(chan error, 1)
	gatewayDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, env.Stdin)
		stdinDone <- err
	}()
	go func() {
		_, err := io.Copy(env.Stdout, conn)
		gatewayDone <- err
	}()
	select {
	case <-ctx.Done():
		return nil
	case <-stdinDone:
		// The agent closed our stdin: it is done with us. Nothing is kept
		// for later; whatever the gateway still sends has no reader.
		return nil
	case err := <-gatewayDone:
		if err != nil {
			return fmt.Errorf("mcp: connection to the gateway failed: %w", err)
		}
		return withExitCode(1, errors.New("mcp: the gateway closed the connection"))
	}
}

// notRunningLinger bounds how long the shim keeps answering after its
// first error. Exiting right after the reply races the client: some read
// the end of stdout before they deliver the reply, and the person would
// see "EOF" instead of the hint. Clients close stdin on the error, which
// ends the shim at once.
var notRunningLinger = 10 * time.Second

// answerNotRunning tells the agent, in JSON-RPC, that Yett is not running:
// every request (normally initialize first) gets the error, notifications
// get nothing as JSON-RPC requires, and the shim exits non-zero when stdin
// ends, or notRunningLinger after the first answer. It never waits for
// Yett to appear: a request it cannot carry now is not kept.
func answerNotRunning(env *Env, cause error) error {
	fmt.Fprintf(env.Stderr, "yett mcp: cannot reach the gateway (%v)\n", cause)
	answered := make(chan struct{}, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		r := rpcframe.NewReader(env.Stdin, rpcframe.Limits{})
		for {
			msg, rej, err := r.Next()
			if err != nil {
				return
			}
			if reply := notRunningReply(msg, rej); reply != nil {
				env.Stdout.Write(reply)
				select {
				case answered <- struct{}{}:
				default:
				}
			}
		}
	}()
	select {
	case <-ended:
	case <-answered:
		select {
		case <-ended:
		case <-time.After(notRunningLinger):
		}
	}
	return withExitCode(1, errNotRunning)
}

// notRunningReply is the error for a request, nil for a notification or a
// stray response.
func notRunningReply(msg jsonrpc.Message, rej *rpcframe.Rejection) []byte {
	switch {
	case rej != nil && rej.Reply == nil:
		return nil // an invalid notification
	case rej != nil:
		// A broken frame: answer with a null id, as JSON-RPC does.
		return rpcframe.ErrorReply(nil, codeNotRunning, notRunningMessage)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return nil
	}
	enc, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: codeNotRunning, Message: notRunningMessage}})
	return append(enc, '\n')
}
