//go:build unix

package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
)

// addEverything defines the real @modelcontextprotocol/server-everything
// (npm, build/agents) as a person would: node, its script, stdio, and an
// API_TOKEN from the vault in its environment.
func addEverything(t *testing.T, w *world, tools map[string]vault.Approval) vault.MCPServerView {
	t.Helper()
	return addEverythingTB(t, w, tools)
}

func addEverythingB(b *testing.B, w *world) vault.MCPServerView { return addEverythingTB(b, w, nil) }

func addEverythingTB(t testing.TB, w *world, tools map[string]vault.Approval) vault.MCPServerView {
	t.Helper()
	node, args := mcpservertest.Everything(t)
	s, err := w.vault.MCPServers().Add(vault.NewMCPServer{
		Name: "everything", Transport: vault.TransportStdio, Command: node, Args: args,
		Secrets:           map[string]vault.Secret{"API_TOKEN": vault.NewSecret([]byte(canary))},
		MCPServerSettings: vault.MCPServerSettings{Tools: tools, Owner: "ana@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type listedTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Annotations map[string]any `json:"annotations"`
	InputSchema map[string]any `json:"inputSchema"`
}

// waitListed waits until the agent's tools/list holds every name.
func waitListed(t *testing.T, a *tsAgent, names ...string) map[string]listedTool {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		var tools []listedTool
		if err := json.Unmarshal(a.do(map[string]any{"op": "list"}).Tools, &tools); err != nil {
			t.Fatal(err)
		}
		byName := map[string]listedTool{}
		for _, tl := range tools {
			byName[tl.Name] = tl
		}
		missing := ""
		for _, n := range names {
			if _, ok := byName[n]; !ok {
				missing = n
			}
		}
		if missing == "" {
			return byName
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never saw %s", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLookup waits until the gateway's upstream manager lists the tool.
func waitLookup(t testing.TB, w *world, name string) {
	t.Helper()
	waitFor(t, name+" listed", func() bool { _, ok := w.upstream.Lookup(name); return ok })
}

func argsDigest(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// A real agent (the official TypeScript SDK through the real yett mcp)
// uses a real stdio MCP server from npm that Yett started with a secret in
// its environment: the tools arrive with the server's list_changed, a tool
// that says it only reads passes on the session, the one the person set
// to per-call asks with its arguments on the card even though it says it
// only reads, the secret it prints reaches the agent redacted, and the
// audit log names the tool and the digest of its arguments.
func TestUpstreamServerThroughYett(t *testing.T) {
	w := newWorld(t, worldOpts{upstream: true})
	a := startTSAgent(t, w)
	addEverything(t, w, map[string]vault.Approval{"get-env": vault.ApprovalPerCall})

	// The tools reach the agent with notifications/tools/list_changed;
	// the ones the server registers after initialization too.
	tools := waitListed(t, a, "everything.echo", "everything.get-env", "everything.get-roots-list")
	// The SDK sends list_changed 10 ms after the last change of the list,
	// so the list can show the tools before the notice has come.
	waitFor(t, "the agent to hear tools/list_changed", func() bool { return a.do(map[string]any{"op": "changes"}).Changes > 0 })
	echo := tools["everything.echo"]
	if echo.Annotations["readOnlyHint"] != true || !strings.Contains(echo.Description, `MCP server "everything"`) {
		t.Fatalf("echo as listed: %+v", echo)
	}
	if props, _ := echo.InputSchema["properties"].(map[string]any); props["idempotency_key"] == nil || props["message"] == nil {
		t.Fatalf("echo's schema: %v", echo.InputSchema)
	}

	// A read on the session card: no card of its own.
	wait := a.send(map[string]any{"op": "call", "tool": "everything.echo", "args": map[string]any{"message": "hello upstream", "idempotency_key": "up-echo-1"}})
	sess := w.pending(approval.KindSession)
	if sess.Channel != ChannelUpstream || sess.Tool != "everything.echo" || !strings.Contains(sess.Arguments, "hello upstream") {
		t.Fatalf("session card: %+v", sess)
	}
	if err := w.gw.Broker().Answer(sess.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if !r.OK || r.IsError || !strings.Contains(r.Text, "Echo: hello upstream") || !strings.Contains(r.Text, "[Yett: COMPLETED, request q-") {
		t.Fatalf("echo: %+v", r)
	}
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("a read asked a card of its own: %+v", p)
	}
	req := waitAudit(t, w, "the echo's intent", func(e audit.Event) bool {
		return e.Type == audit.EventActionRequested && e.Action != nil && e.Action.IdempotencyRef == "up-echo-1"
	})
	if a := req.Action; a.Channel != ChannelUpstream || a.Operation != "everything.echo" || a.Target != "everything" ||
		a.ArgumentsSHA256 != argsDigest(map[string]any{"message": "hello upstream"}) {
		t.Fatalf("the intent's action: %+v", a)
	}
	if st := a.callStatus("up-echo-1"); !strings.Contains(st, `"outcome":"COMPLETED"`) {
		t.Fatalf("yett.status of the echo: %s", st)
	}

	// get-env says it only reads; the person said every call asks. The
	// card shows the tool and its arguments; the secret it prints comes
	// back redacted.
	wait = a.send(map[string]any{"op": "call", "tool": "everything.get-env", "args": map[string]any{}})
	card := w.pendingCall(t, false)
	if card.Tool != "everything.get-env" || card.Arguments != "{}" || card.Method != MethodUpstream || card.Credential != "MCP server everything" {
		t.Fatalf("per-call card: %+v", card)
	}
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r = wait()
	if !r.OK || strings.Contains(r.Text, canary) || !strings.Contains(r.Text, `"API_TOKEN": "[REDACTED]"`) {
		t.Fatalf("get-env through Yett: %+v", r)
	}

	// A tool that does not say it only reads asks under "writes"; denied,
	// it is refused and never sent.
	wait = a.send(map[string]any{"op": "call", "tool": "everything.toggle-simulated-logging", "args": map[string]any{"idempotency_key": "up-toggle-1"}})
	if err := w.gw.Broker().Answer(w.pendingCall(t, false).ID, false, "test"); err != nil {
		t.Fatal(err)
	}
	if r := wait(); r.Structured["outcome"] != agentapi.CodeDenied {
		t.Fatalf("a denied write: %+v", r)
	}
	for _, e := range auditEvents(t, w) {
		if e.Type == audit.EventActionRequested && e.Action != nil && e.Action.IdempotencyRef == "up-toggle-1" {
			t.Fatal("a denied call was recorded as sent")
		}
	}

	// The agent's own environment never held the secret.
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", a.do(map[string]any{"op": "changes"}).PID)); err == nil && strings.Contains(string(env), canary) {
		t.Fatal("the secret is in the agent's environment")
	}
}

// callStatus asks yett.status about key through the TypeScript agent.
func (a *tsAgent) callStatus(key string) string {
	r := a.do(map[string]any{"op": "call", "tool": agentapi.ToolStatus, "args": map[string]any{"idempotency_key": key}})
	b, _ := json.Marshal(r.Structured)
	return string(b)
}

// Refusals and faults of upstream calls: locked, refused and never run
// after unlock; a lock cuts a slow call; the server killed mid-call gives
// STATUS_UNKNOWN, now and from yett.status; a result over the cap is cut
// and says so.
func TestUpstreamFaultsThroughYett(t *testing.T) {
	w := newWorld(t, worldOpts{upstream: true, upstreamCap: 4096})
	a := startTSAgent(t, w)
	addEverything(t, w, nil)
	waitListed(t, a, "everything.echo", "everything.trigger-long-running-operation")
	call := func(tool, key string, args map[string]any) func() tsReply {
		args["idempotency_key"] = key
		return a.send(map[string]any{"op": "call", "tool": tool, "args": args})
	}
	// Approve the run.
	wait := call("everything.echo", "up-f-0", map[string]any{"message": "start"})
	w.approveNext()
	if r := wait(); !strings.Contains(r.Text, "Echo: start") {
		t.Fatalf("first call: %+v", r)
	}

	// Over the cap: cut, flagged, and still the server's words.
	r := call("everything.echo", "up-f-big", map[string]any{"message": strings.Repeat("y", 10000)})()
	if !strings.Contains(r.Text, "Yett cut the result at its cap") || len(r.Text) > 4096+1024 || !strings.Contains(r.Text, "Echo: yyyy") {
		t.Fatalf("over the cap (%d bytes): %.300s", len(r.Text), r.Text)
	}

	// A lock during a slow call cuts it.
	wait = call("everything.trigger-long-running-operation", "up-f-lock", map[string]any{"duration": 30, "steps": 30})
	waitAudit(t, w, "the slow call's intent", func(e audit.Event) bool {
		return e.Type == audit.EventActionRequested && e.Action != nil && e.Action.IdempotencyRef == "up-f-lock"
	})
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	w.lock()
	r = wait()
	if r.Structured["outcome"] != "STATUS_UNKNOWN" || !strings.Contains(r.Text, "vault was locked while this call was in flight") || time.Since(start) > 10*time.Second {
		t.Fatalf("a lock during a slow call: %+v", r)
	}
	waitAudit(t, w, "the cut call's result", func(e audit.Event) bool {
		return e.Type == audit.EventActionResult && e.Action != nil && e.Action.IdempotencyRef == "up-f-lock" && e.Reason == audit.ReasonCutByLock
	})

	// Locked: refused, and never run after unlock.
	r = call("everything.echo", "up-f-locked", map[string]any{"message": "while locked"})()
	if r.Structured["outcome"] != agentapi.CodeLocked {
		t.Fatalf("a call while locked: %+v", r)
	}
	w.unlock()
	waitListed(t, a, "everything.echo")
	// The lock ended the run's session: the first call asks again.
	if r := call("everything.echo", "up-f-1", map[string]any{"message": "after unlock"})(); r.Structured["outcome"] != "REAUTH_REQUIRED" {
		t.Fatalf("first call after unlock: %+v", r)
	}
	w.approveNext()
	if r := call("everything.echo", "up-f-2", map[string]any{"message": "after unlock"})(); !strings.Contains(r.Text, "Echo: after unlock") {
		t.Fatalf("after unlock: %+v", r)
	}
	if st := a.callStatus("up-f-locked"); !strings.Contains(st, `"outcome":"NOT_FOUND"`) {
		t.Fatalf("the locked call's status: %s", st)
	}
	for _, e := range auditEvents(t, w) {
		if e.Type == audit.EventActionRequested && e.Action != nil && e.Action.IdempotencyRef == "up-f-locked" {
			t.Fatal("a call refused while locked was sent after unlock")
		}
	}

	// The server killed mid-call: STATUS_UNKNOWN, and yett.status says so.
	wait = call("everything.trigger-long-running-operation", "up-f-kill", map[string]any{"duration": 30, "steps": 30})
	waitAudit(t, w, "the call's intent", func(e audit.Event) bool {
		return e.Type == audit.EventActionRequested && e.Action != nil && e.Action.IdempotencyRef == "up-f-kill"
	})
	time.Sleep(200 * time.Millisecond)
	st := w.upstream.Statuses()
	if len(st) != 1 || st[0].PID == 0 {
		t.Fatalf("statuses: %+v", st)
	}
	syscall.Kill(st[0].PID, syscall.SIGKILL)
	r = wait()
	if r.Structured["outcome"] != "STATUS_UNKNOWN" || !strings.Contains(r.Text, "broke while the call was in flight") {
		t.Fatalf("server killed mid-call: %+v", r)
	}
	if st := a.callStatus("up-f-kill"); !strings.Contains(st, `"outcome":"STATUS_UNKNOWN"`) {
		t.Fatalf("status of the killed call: %s", st)
	}
	// While it starts again its tools are refused as not ready, nothing
	// sent; once it is back, the same key is never run again.
	if r := call("everything.echo", "up-f-restarting", map[string]any{"message": "x"})(); r.Structured["outcome"] != "UNAVAILABLE" &&
		!strings.Contains(r.Text, "Echo: x") {
		t.Fatalf("a call while the server restarts: %+v", r)
	}
	waitListed(t, a, "everything.trigger-long-running-operation")
	r = call("everything.trigger-long-running-operation", "up-f-kill", map[string]any{"duration": 30, "steps": 30})()
	if r.Structured["outcome"] != "STATUS_UNKNOWN" || !strings.Contains(r.Text, "not sent again") {
		t.Fatalf("the retry of a lost call: %+v", r)
	}
}

// BenchmarkUpstreamCallVsDirect measures, in the same run, one call of
// server-everything's echo through `yett mcp` and the gateway (identity,
// session, journal and audit, redaction, Yett's own client session with
// the server) against the same call on a direct Go SDK stdio session with
// another server-everything, alternating the two.
func BenchmarkUpstreamCallVsDirect(b *testing.B) {
	w := newWorld(b, worldOpts{upstream: true})
	defer autoApprove(w)()
	s := addEverythingB(b, w)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	yett, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: newShimCmd(w.runDir)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer yett.Close()
	direct, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(s.Command, s.Args...)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	waitLookup(b, w, "everything.echo")
	call := func(s *mcp.ClientSession, name string, i int) {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": fmt.Sprintf("bench %d", i)}})
		if err != nil || res.IsError {
			b.Fatalf("call %s: %v %+v", name, err, res)
		}
	}
	call(yett, "everything.echo", -1) // the session approval is not part of the figure
	var gw, dir []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		call(yett, "everything.echo", i)
		gw = append(gw, time.Since(t0))
		t0 = time.Now()
		call(direct, "echo", i)
		dir = append(dir, time.Since(t0))
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
	b.ReportMetric(us(percentile(gw, .5)), "yett-p50-µs")
	b.ReportMetric(us(percentile(gw, .99)), "yett-p99-µs")
	b.ReportMetric(us(percentile(dir, .5)), "direct-p50-µs")
	b.ReportMetric(us(percentile(dir, .99)), "direct-p99-µs")
	b.ReportMetric(float64(percentile(gw, .5))/float64(percentile(dir, .5)), "p50-ratio")
}
