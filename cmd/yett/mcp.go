package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/rpcframe"
	"github.com/yettdev/yett/backend/userdir"
)

func init() {
	commands["mcp"] = command{
		usage:   mcpUsage,
		summary: "MCP shim for agents: pipe stdio to the running Yett gateway",
		run:     runMCP,
	}
}

// gatewaySocketName is the gateway's socket inside userdir.RuntimeDir on
// Unix (tests put a stub gateway there); on Windows the gateway is a named
// pipe derived from the same directory, and gateway.Dial knows both.
const gatewaySocketName = gateway.SocketName

// notRunningMessage is what the agent (and through it the person) reads
// when there is no gateway to talk to, after where the shim looked.
const notRunningMessage = "Yett is not running: start the Yett app or `yett serve`, then restart this agent"

// notRunningText is the error the agent reads: the message, then where the
// shim looked and what chose each place (the client may show only this).
func notRunningText(cause error) string {
	return notRunningMessage + " (" + cause.Error() + ")"
}

// codeNotRunning is a JSON-RPC implementation-defined server error.
const codeNotRunning = -32000

var errNotRunning = errors.New("mcp: " + notRunningMessage)

const mcpUsage = `usage: yett mcp

The MCP server an agent's client starts (stdio). It carries the agent's
messages to the running Yett (the app or yett serve) and back, and holds no
secret and no state. Configure the client to run "yett mcp" with no
arguments (the Connect page of the app shows the line for each client).

It finds Yett in $YETT_RUNTIME_DIR when set; otherwise in
$XDG_RUNTIME_DIR/yett, then /run/user/UID/yett, then the data directory
(~/.local/share/yett/run), so a client that passes it only HOME and PATH
still finds it. When Yett is not running, every request is answered with an
error that says where it looked.
`

// runMCP is the shim the agent's MCP client starts. It is a dumb pipe on
// purpose: the gateway identifies the agent from the kernel and applies
// every rule, so the shim holds no state, retries nothing, queues nothing
// and writes nothing to stdout but the gateway's bytes. It logs to stderr
// only, and ends as soon as either side closes.
func runMCP(ctx context.Context, env *Env, args []string) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(env.Stdout, mcpUsage)
		return nil
	}
	if len(args) != 0 {
		return withExitCode(2, errors.New("mcp: takes no arguments; configure the agent to run `yett mcp`"))
	}
	// Two copies, one message at a time each, waiting in the poller
	// (pollableStdio): a second processor only has more of the scheduler
	// looking for work, and under 16 agents took CPU from the gateway
	// (BenchmarkVsAgentVault: 16 agents fell from 0.58-0.69 of agent-vault's
	// rate to 0.51-0.53 with two).
	runtime.GOMAXPROCS(1)
	conn, err := dialGateway(ctx, env.Getenv)
	if err != nil {
		return answerNotRunning(env, err)
	}
	return pipe(ctx, env, conn)
}

// dialGateway connects to the gateway in the first of the user's runtime
// places that has one (userdir.RuntimePlaces: a client may start the shim
// without $XDG_RUNTIME_DIR). The error names every place tried and what
// chose it, for the agent's error and the person reading it.
func dialGateway(ctx context.Context, getenv userdir.Getenv) (net.Conn, error) {
	places, err := userdir.RuntimePlaces(getenv)
	if err != nil {
		return nil, fmt.Errorf("no runtime directory: %w", err)
	}
	var tried []string
	for _, p := range places {
		conn, err := gateway.Dial(ctx, p.Dir)
		if err == nil {
			return conn, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", gateway.Address(p.Dir), p.Why))
	}
	return nil, fmt.Errorf("no gateway at %s", strings.Join(tried, " nor at "))
}

// pipe copies stdin to the gateway and the gateway to stdout until one
// side ends: with pump where stdin and stdout are pipes or sockets (an
// agent's client), else with a goroutine each way.
func pipe(ctx context.Context, env *Env, conn net.Conn) error {
	defer conn.Close()
	if run, restore, ok := pumpStdio(env, conn); ok {
		defer restore()
		type ended struct {
			how pumpEnd
			err error
		}
		done := make(chan ended, 1)
		go func() {
			how, err := run()
			done <- ended{how, err}
		}()
		select {
		case <-ctx.Done():
			return nil
		case e := <-done:
			return pipeEnded(e.how, e.err)
		}
	}
	stdinDone := make(chan error, 1)
	gatewayDone := make(chan error, 1)
	in, out, restore := pollableStdio(env)
	defer restore()
	go func() {
		_, err := io.Copy(conn, in)
		stdinDone <- err
	}()
	go func() {
		_, err := io.Copy(out, conn)
		gatewayDone <- err
	}()
	select {
	case <-ctx.Done():
		return nil
	case <-stdinDone:
		return pipeEnded(agentGone, nil)
	case err := <-gatewayDone:
		if err != nil {
			return pipeEnded(gatewayBroken, err)
		}
		return pipeEnded(gatewayClosed, nil)
	}
}

// pumpEnd is how the shim's copying ended.
type pumpEnd int

const (
	// agentGone: stdin reached its end or failed, or stdout was closed.
	agentGone pumpEnd = iota
	// gatewayClosed: the gateway's connection reached its end.
	gatewayClosed
	// gatewayBroken: reading or writing the gateway's connection failed.
	gatewayBroken
)

// pipeEnded is what the shim returns when its copying ends.
func pipeEnded(how pumpEnd, err error) error {
	switch how {
	case agentGone:
		// The agent closed our stdin (or stdout): it is done with us.
		// Nothing is kept for later; whatever the gateway still sends has
		// no reader.
		return nil
	case gatewayClosed:
		return withExitCode(1, errors.New("mcp: the gateway closed the connection"))
	default:
		return fmt.Errorf("mcp: connection to the gateway failed: %w", err)
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
	text := notRunningText(cause)
	fmt.Fprintf(env.Stderr, "yett mcp: %s\n", text)
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
			if reply := notRunningReply(msg, rej, text); reply != nil {
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
func notRunningReply(msg jsonrpc.Message, rej *rpcframe.Rejection, text string) []byte {
	switch {
	case rej != nil && rej.Reply == nil:
		return nil // an invalid notification
	case rej != nil:
		// A broken frame: answer with a null id, as JSON-RPC does.
		return rpcframe.ErrorReply(nil, codeNotRunning, text)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return nil
	}
	enc, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: codeNotRunning, Message: text}})
	return append(enc, '\n')
}
