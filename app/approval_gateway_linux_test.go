package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/yettbuild"
)

// The end-to-end path the desktop card serves: a real agent process (this
// test binary re-executed) starts the real `yett mcp` shim, which dials a
// real gateway; the card reaches ApprovalService as the UI would see it,
// the person's Answer lets the call through to a loopback receiver with the
// credential injected, and the agent's exit ends the live session.

const gatewayCanary = "CANARY-app-gw-3b8d51e0"

func TestMain(m *testing.M) {
	if os.Getenv("YETT_APP_TEST_AGENT") == "1" {
		os.Exit(agentProcessMain())
	}
	code := m.Run()
	if yettBinPath != "" {
		os.RemoveAll(filepath.Dir(yettBinPath))
	}
	os.Exit(code)
}

// agentProcessMain is the agent: connect through the shim, make one
// http.request, print its answer as one JSON line, then stay alive until
// stdin closes (or it is killed) so its session stays live.
func agentProcessMain() int {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "app-test-agent", Version: "0"}, nil)
	shim := exec.Command(os.Getenv("YETT_BIN"), "mcp")
	shim.Stderr = os.Stderr
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	session, err := client.Connect(cctx, &mcp.CommandTransport{Command: shim}, nil)
	cancel()
	out := json.NewEncoder(os.Stdout)
	if err != nil {
		out.Encode(map[string]any{"err": err.Error()})
		return 1
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: agentapi.ToolHTTPRequest, Arguments: map[string]any{
		"method": "POST", "url": os.Getenv("YETT_AGENT_URL"), "body": map[string]any{"hello": "card"},
		"idempotency_key": "app-card-test-1",
	}})
	if err != nil {
		out.Encode(map[string]any{"err": err.Error()})
		return 1
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	out.Encode(map[string]any{"text": strings.Join(texts, "\n"), "is_error": res.IsError})
	io.Copy(io.Discard, os.Stdin)
	return 0
}

var (
	yettBinOnce sync.Once
	yettBinPath string
	yettBinErr  error
)

// buildYett builds the real yett binary once per test run.
func buildYett(t *testing.T) string {
	t.Helper()
	yettBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yett-app-bin-")
		if err != nil {
			yettBinErr = err
			return
		}
		yettBinPath = filepath.Join(dir, "yett")
		out, err := yettbuild.Command("-o", yettBinPath, "github.com/yettdev/yett/cmd/yett").CombinedOutput()
		if err != nil {
			yettBinErr = fmt.Errorf("go build cmd/yett: %v\n%s", err, out)
		}
	})
	if yettBinErr != nil {
		t.Fatal(yettBinErr)
	}
	return yettBinPath
}

// arrivals counts requests at a loopback receiver and whether they carried
// the injected credential (compared here, never stored or printed).
type arrivals struct {
	n, withCredential atomic.Int32
}

func startCardReceiver(t *testing.T) (string, *arrivals) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &arrivals{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.n.Add(1)
		if r.Header.Get("Authorization") == "Bearer "+gatewayCanary {
			a.withCredential.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), a
}

func TestRealAgentApprovedOnTheDesktopCard(t *testing.T) {
	bin := buildYett(t)
	// A short base: the socket path must fit in sun_path.
	base, err := os.MkdirTemp("", "yapp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dataDir, runDir := filepath.Join(base, "data"), filepath.Join(base, "run")
	addr, got := startCardReceiver(t)

	v, err := vault.Open(filepath.Join(base, "vault"), vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	if err := v.Create(vault.Passphrase("correct horse battery staple"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Credentials().Add(vault.NewCredential{
		Name: "receiver", Secret: vault.NewSecret([]byte(gatewayCanary)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{addr}, Approval: vault.ApprovalSession,
	}); err != nil {
		t.Fatal(err)
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	var gwLogs bytes.Buffer
	var gwLogMu sync.Mutex
	log, _, err := audit.Open(audit.Options{Dir: filepath.Join(dataDir, "audit"), Recipient: id.Recipient(), Carried: gateway.CarriedAudit(dataDir)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	gw, err := gateway.New(gateway.Config{
		Vault: v, DataDir: dataDir, RuntimeDir: runDir, Audit: log, ApprovalTimeout: 30 * time.Second,
		Logger: slog.New(slog.NewTextHandler(lockedBuffer{&gwLogMu, &gwLogs}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	go gw.Serve(context.Background())

	f := &approvalFixture{events: &stateLog{}, logs: &bytes.Buffer{}}
	sink := &eventSink{}
	sink.attach(f.events.emit)
	f.svc = newApprovalService(sink, slog.New(slog.NewTextHandler(f.logs, nil)))
	f.svc.attach(gw.Broker())
	t.Cleanup(func() {
		// As the app will do it: detach, then stop the gateway.
		f.svc.attach(nil)
		gw.Close()
		gwLogMu.Lock()
		defer gwLogMu.Unlock()
		for what, s := range map[string]string{"event payloads": f.events.allJSON(), "app log": f.logs.String(), "gateway log": gwLogs.String()} {
			if strings.Contains(s, gatewayCanary) {
				t.Errorf("the credential reached the %s", what)
			}
		}
	})

	agent := startTestAgent(t, bin, runDir, "http://"+addr+"/card-test")
	pid := agent.cmd.Process.Pid

	st := f.waitState(t, "the agent's card", cardsIs(1))
	c := st.Cards[0]
	if c.Agent.PID != pid || c.Agent.Executable != filepath.Base(os.Args[0]) {
		t.Errorf("card names %s pid %d, want %s pid %d", c.Agent.Executable, c.Agent.PID, filepath.Base(os.Args[0]), pid)
	}
	if c.Agent.Parents[0].PID != os.Getpid() || c.Agent.Signer != "unsigned" || c.Kind != "session" || c.Agent.Via != bin {
		t.Errorf("card %+v", c)
	}
	if want := "This process has not been approved before. Approve it to use " + addr + " during this run."; c.Sentence != want {
		t.Errorf("sentence %q, want %q", c.Sentence, want)
	}
	if got.n.Load() != 0 {
		t.Fatal("the call went out before anyone approved it")
	}

	if err := f.svc.Answer(c.ID, true); err != nil {
		t.Fatalf("approve: %v", err)
	}
	var reply struct {
		Text    string `json:"text"`
		IsError bool   `json:"is_error"`
		Err     string `json:"err"`
	}
	select {
	case line := <-agent.reply:
		if err := json.Unmarshal([]byte(line), &reply); err != nil {
			t.Fatalf("agent said %q (stderr %s)", line, agent.stderrText())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent's call never returned (stderr %s)", agent.stderrText())
	}
	if reply.Err != "" || reply.IsError || strings.Contains(reply.Text, gatewayCanary) {
		t.Fatalf("agent reply %+v", reply)
	}
	if got.n.Load() != 1 || got.withCredential.Load() != 1 {
		t.Errorf("receiver saw %d calls, %d with the credential; want 1 and 1", got.n.Load(), got.withCredential.Load())
	}
	st = f.waitState(t, "the live session", func(s ApprovalState) bool { return len(s.Sessions) == 1 })
	if s := st.Sessions[0]; s.Agent.PID != pid || s.Surface != SurfaceDesktopCard {
		t.Errorf("live session %+v", s)
	}

	// The agent exits: the gateway ends its run and the UI's list empties.
	agent.cmd.Process.Kill()
	f.waitState(t, "no live session after the agent died", func(s ApprovalState) bool { return len(s.Sessions) == 0 })
}

// testAgent is agentProcessMain in a process of its own, calling through
// the real yett mcp and the gateway of a runtime directory.
type testAgent struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	reply chan string // its one JSON line
	errMu sync.Mutex
	err   bytes.Buffer
}

// startTestAgent starts the agent, which calls url once. It is killed when
// the test ends, and then neither it nor its shim may have written the
// credential to stderr.
func startTestAgent(t *testing.T, bin, runDir, url string) *testAgent {
	t.Helper()
	a := &testAgent{cmd: exec.Command(os.Args[0], "-test.run=^$"), reply: make(chan string, 1)}
	a.cmd.Env = append(os.Environ(), "YETT_APP_TEST_AGENT=1", "YETT_BIN="+bin, "YETT_RUNTIME_DIR="+runDir, "YETT_AGENT_URL="+url)
	a.stdin, _ = a.cmd.StdinPipe()
	out, _ := a.cmd.StdoutPipe()
	a.cmd.Stderr = lockedBuffer{&a.errMu, &a.err}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.stdin.Close()
		a.cmd.Process.Kill()
		a.cmd.Wait()
		if strings.Contains(a.stderrText(), gatewayCanary) {
			t.Error("the credential reached the agent's or the shim's stderr")
		}
	})
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		a.reply <- line
	}()
	return a
}

func (a *testAgent) stderrText() string {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	return a.err.String()
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
