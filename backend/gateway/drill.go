package gateway

import (
	"errors"
	"fmt"
	"net"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
)

var refusedDrill = &refusal{agentapi.CodeDrillStopped, audit.ReasonDrillStopped,
	"a revocation drill's call stops before approval; nothing was sent"}

// ErrClosed is returned by DrillConn after Close.
var ErrClosed = errors.New("gateway: closed")

// DrillConn connects Yett's own revocation drill client (backend/inventory)
// to the gateway and returns its end of the connection: an MCP session,
// served exactly as an agent's connection is from the policy point on (the
// frame policy, the SDK's session, routeCalls and the pipelines), over an
// in-memory pipe instead of the socket. Its run is this process, inspected
// as an agent's origin is, so its calls and refusals are recorded under
// Yett's own pid and executable.
//
// A drill client can never send anything: it holds no session, and its
// calls stop where an agent's would be approved (agentapi.CodeDrillStopped) after
// every earlier check. No agent can reach this connection: it exists only
// in this process.
func (g *Gateway) DrillConn() (net.Conn, error) {
	run, err := g.insp.Self()
	if err != nil {
		return nil, fmt.Errorf("gateway: inspecting this process: %w", err)
	}
	client, server := net.Pipe()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		run.Close()
		return nil, ErrClosed
	}
	g.wg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		g.serveConn(server, run, true)
	}()
	return client, nil
}

// Control is what the gateway asks of the owner inventory
// (backend/inventory satisfies it): whether the credential or
// authorization ref may serve now. It answers from memory.
type Control interface {
	// Blocked reports that ref is not under control (a column of its
	// inventory row is empty) while the person blocks such rows.
	Blocked(ref string) bool
}

// control refuses a call whose credential or authorization ref is blocked
// by the inventory. Nothing is asked of a person and nothing is sent.
func (g *Gateway) control(ref string) *refusal {
	if g.cfg.Control == nil || !g.cfg.Control.Blocked(ref) {
		return nil
	}
	return &refusal{agentapi.CodeDenied, audit.ReasonUncontrolled,
		"the credential or account behind this call is not under control in Yett's inventory (a column such as its owner or backup revoker is empty), and Yett blocks such rows; nothing was sent"}
}
