package keeper

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/internal/testsupport/yettbuild"
)

// A real agent for the keeper's tests: this test binary re-executed as an
// MCP client that starts the real `yett mcp` shim (built once), and makes
// one http.request for each line "call URL KEY" on its stdin (or one ssh.exec
// for "ssh HOST WORD KEY"), printing
// each result as a JSON line. The gateway identifies it as the origin, so
// cards name it.

const agentEnv = "YETT_KEEPER_TEST_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		os.Exit(agentMain())
	}
	code := m.Run()
	if yettBin != "" {
		os.RemoveAll(filepath.Dir(yettBin))
	}
	os.Exit(code)
}

func agentMain() int {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "keeper-test-agent", Version: "0"}, nil)
	shim := exec.Command(os.Getenv("YETT_BIN"), "mcp")
	shim.Stderr = os.Stderr
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	session, err := client.Connect(cctx, &mcp.CommandTransport{Command: shim}, nil)
	cancel()
	out := json.NewEncoder(os.Stdout)
	if err != nil {
		out.Encode(agentReply{Err: err.Error()})
		return 1
	}
	defer session.Close()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		params := &mcp.CallToolParams{}
		switch {
		case len(f) == 3 && f[0] == "call":
			params.Name, params.Arguments = agentapi.ToolHTTPRequest, map[string]any{
				"method": "POST", "url": f[1], "body": map[string]any{"from": "keeper test"}, "idempotency_key": f[2],
			}
		case len(f) == 4 && f[0] == "ssh":
			// "ssh HOST WORD KEY": ssh.exec of `echo WORD` on HOST.
			params.Name, params.Arguments = agentapi.ToolSSHExec, map[string]any{
				"host": f[1], "command": "echo " + f[2], "idempotency_key": f[3],
			}
		case len(f) == 2 && f[0] == "spawn":
			// "spawn BASE64-JSON": start {argv, env} as this agent's own
			// child (what an agent's shell tool does), killed with it.
			out.Encode(spawn(f[1]))
			continue
		default:
			continue
		}
		res, err := session.CallTool(ctx, params)
		if err != nil {
			out.Encode(agentReply{Err: err.Error()})
			continue
		}
		var texts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		out.Encode(agentReply{Text: strings.Join(texts, "\n"), IsError: res.IsError})
	}
	return 0
}

type spawnRequest struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
}

func spawn(arg string) agentReply {
	var req spawnRequest
	b, err := base64.StdEncoding.DecodeString(arg)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err != nil || len(req.Argv) == 0 {
		return agentReply{Err: fmt.Sprintf("spawn: %q: %v", arg, err)}
	}
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Env = req.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return agentReply{Err: "spawn: " + err.Error()}
	}
	go cmd.Wait()
	return agentReply{Text: strconv.Itoa(cmd.Process.Pid)}
}

// spawn makes the agent start argv with env as its child, and returns the
// child's pid.
func (a *agent) spawn(argv, env []string) int {
	a.t.Helper()
	b, _ := json.Marshal(spawnRequest{Argv: argv, Env: env})
	fmt.Fprintf(a.in, "spawn %s\n", base64.StdEncoding.EncodeToString(b))
	r := a.reply()
	pid, err := strconv.Atoi(r.Text)
	if err != nil {
		a.t.Fatalf("the agent did not start %v: %+v", argv, r)
	}
	return pid
}

type agentReply struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error"`
	Err     string `json:"err"`
}

var (
	yettOnce sync.Once
	yettBin  string
	yettErr  error
)

// buildYett builds the real yett CLI once per test binary.
func buildYett(t testing.TB) string {
	t.Helper()
	yettOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yett-keeper-bin-")
		if err != nil {
			yettErr = err
			return
		}
		yettBin = filepath.Join(dir, "yett")
		if out, err := yettbuild.Command("-o", yettBin, "github.com/yettdev/yett/cmd/yett").CombinedOutput(); err != nil {
			yettErr = fmt.Errorf("go build cmd/yett: %v\n%s", err, out)
		}
	})
	if yettErr != nil {
		t.Fatal(yettErr)
	}
	return yettBin
}

// agent is a running test agent.
type agent struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan agentReply
	stderr  *strings.Builder
	calls   int
}

func startAgent(t testing.TB, runDir string) *agent {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentEnv+"=1", "YETT_BIN="+buildYett(t), "YETT_RUNTIME_DIR="+runDir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, cmd: cmd, in: in, replies: make(chan agentReply, 16), stderr: &strings.Builder{}}
	cmd.Stderr = &lockedWriter{w: a.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r agentReply
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				r.Err = "unreadable reply: " + sc.Text()
			}
			a.replies <- r
		}
		close(a.replies)
	}()
	t.Cleanup(a.kill)
	return a
}

// call asks the agent to make one call; its reply comes on a.replies.
func (a *agent) call(url string) {
	a.calls++
	fmt.Fprintf(a.in, "call %s keeper-test-%d-%d\n", url, a.cmd.Process.Pid, a.calls)
}

// ssh asks the agent to run `echo word` on host through ssh.exec.
func (a *agent) ssh(host, word string) {
	a.calls++
	fmt.Fprintf(a.in, "ssh %s %s keeper-test-%d-%d\n", host, word, a.cmd.Process.Pid, a.calls)
}

func (a *agent) reply() agentReply {
	a.t.Helper()
	select {
	case r, ok := <-a.replies:
		if !ok {
			a.t.Fatalf("the agent exited (stderr %s)", a.stderr)
		}
		return r
	case <-time.After(60 * time.Second):
		a.t.Fatalf("the agent's call never returned (stderr %s)", a.stderr)
		return agentReply{}
	}
}

func (a *agent) kill() {
	if a.cmd.ProcessState == nil {
		a.cmd.Process.Kill()
		a.cmd.Wait()
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// receiver is seed 004's controlled receiver, reduced: a loopback server
// counting arrivals and whether they carried the injected credential
// (compared here, never stored or printed).
type receiver struct {
	addr           string
	n, credentials atomic.Int32
	arrived        chan time.Time
}

func startReceiver(t testing.TB, secret string) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{addr: ln.Addr().String(), arrived: make(chan time.Time, 256)}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.arrived <- time.Now()
		r.n.Add(1)
		if req.Header.Get("Authorization") == "Bearer "+secret {
			r.credentials.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}
