//go:build unix

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
)

// The agent is this test binary re-executed with YETT_TEST_AGENT=1: a real,
// separate process that runs the go-sdk MCP client over `yett mcp`, so procid
// sees a real origin. It takes one JSON command per stdin line and answers
// one JSON line on stdout (its own stdout; MCP runs on the shim's pipes).

type agentCmd struct {
	Op   string          `json:"op"`
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	N    int             `json:"n,omitempty"` // loop: calls to make
}

type agentReply struct {
	OK      bool   `json:"ok"`
	Err     string `json:"err,omitempty"`
	Text    string `json:"text,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// Structured is the result's structuredContent; ToolDefs the listed
	// tools as the client read them.
	Structured json.RawMessage `json:"structured,omitempty"`
	ToolDefs   json.RawMessage `json:"tool_defs,omitempty"`
	Tools      []string        `json:"tools,omitempty"`
	PID        int             `json:"pid,omitempty"`
	Changes    int             `json:"changes,omitempty"`
	Failed     int             `json:"failed,omitempty"`
	Busy       int             `json:"busy,omitempty"`
	Nanos      int64           `json:"nanos,omitempty"`
}

func agentMain() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	var (
		session *mcp.ClientSession
		shim    *exec.Cmd
		mu      sync.Mutex
		changes int
	)
	ctx := context.Background()
	for in.Scan() {
		var c agentCmd
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			out.Encode(agentReply{Err: "bad command"})
			continue
		}
		var r agentReply
		switch c.Op {
		case "pid":
			r = agentReply{OK: true, PID: os.Getpid()}
		case "connect":
			shim = exec.Command(os.Getenv("YETT_BIN"), "mcp")
			shim.Stderr = os.Stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "0"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					mu.Lock()
					changes++
					mu.Unlock()
				},
			})
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			s, err := client.Connect(cctx, &mcp.CommandTransport{Command: shim}, nil)
			cancel()
			if err != nil {
				r = agentReply{Err: err.Error()}
				break
			}
			session, r = s, agentReply{OK: true}
		case "call":
			if session == nil {
				r = agentReply{Err: "not connected"}
				break
			}
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Args})
			if err != nil {
				r = agentReply{Err: err.Error()}
				break
			}
			var texts []string
			for _, ct := range res.Content {
				if t, ok := ct.(*mcp.TextContent); ok {
					texts = append(texts, t.Text)
				}
			}
			structured, _ := json.Marshal(res.StructuredContent)
			r = agentReply{OK: true, Text: strings.Join(texts, "\n"), IsError: res.IsError, Structured: structured}
		case "loop":
			// N sequential calls of Tool (http.request by default), each
			// with its own key.
			if session == nil {
				r = agentReply{Err: "not connected"}
				break
			}
			var tmpl map[string]any
			json.Unmarshal(c.Args, &tmpl)
			base := fmt.Sprint(tmpl["idempotency_key"])
			start := time.Now()
			for i := 0; i < c.N; i++ {
				tmpl["idempotency_key"] = fmt.Sprintf("%s-%d-%d", base, os.Getpid(), i)
				tool := c.Tool
				if tool == "" {
					tool = "http.request"
				}
				res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: tmpl})
				if err != nil || res.IsError {
					r.Failed++
				}
			}
			r.OK, r.Nanos = true, time.Since(start).Nanoseconds()
		case "burst":
			// N concurrent calls of one tool, each with its own key.
			if session == nil {
				r = agentReply{Err: "not connected"}
				break
			}
			var tmpl map[string]any
			json.Unmarshal(c.Args, &tmpl)
			var wg sync.WaitGroup
			var fmu sync.Mutex
			var fails []string
			for i := 0; i < c.N; i++ {
				args := map[string]any{}
				for k, v := range tmpl {
					args[k] = v
				}
				args["idempotency_key"] = fmt.Sprintf("burst-%d-%d", os.Getpid(), i)
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args})
					fmu.Lock()
					defer fmu.Unlock()
					switch {
					case err != nil:
						fails = append(fails, err.Error())
					case res.IsError:
						for _, ct := range res.Content {
							if t, ok := ct.(*mcp.TextContent); ok {
								fails = append(fails, t.Text)
							}
						}
					}
				}()
			}
			wg.Wait()
			for _, f := range fails {
				if strings.Contains(f, "BUSY") {
					r.Busy++
				}
			}
			r.OK, r.Failed = true, len(fails)
			r.Text = strings.Join(fails[:min(len(fails), 3)], "\n")
		case "statusloop":
			// N sequential yett.status calls (an agent polling).
			if session == nil {
				r = agentReply{Err: "not connected"}
				break
			}
			start := time.Now()
			for i := 0; i < c.N; i++ {
				if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: agentapi.ToolStatus, Arguments: c.Args}); err != nil {
					r.Failed++
				}
			}
			r.OK, r.Nanos = true, time.Since(start).Nanoseconds()
		case "rawloop":
			// N sequential http.request calls from a minimal JSON-RPC
			// client of its own (its own shim, no SDK): what the gateway
			// costs, without an SDK client's own costs on the agent side.
			r = rawLoop(c)
		case "callbig":
			// An http.request whose frame is N bytes of body: larger than
			// any stdin command line could carry. Bounded by its own
			// timeout so an unanswered frame shows up as that, not as a hang.
			if session == nil {
				r = agentReply{Err: "not connected"}
				break
			}
			var args map[string]any
			json.Unmarshal(c.Args, &args)
			args["body"] = strings.Repeat("x", c.N)
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			start := time.Now()
			res, err := session.CallTool(cctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args})
			cancel()
			r = agentReply{OK: err == nil, Nanos: time.Since(start).Nanoseconds()}
			if err != nil {
				r.Err = err.Error()
			} else {
				for _, ct := range res.Content {
					if t, ok := ct.(*mcp.TextContent); ok {
						r.Text += t.Text
					}
				}
				r.IsError = res.IsError
			}
		case "list":
			if session == nil {
				r = agentReply{Err: "not connected"}
				break
			}
			res, err := session.ListTools(ctx, nil)
			if err != nil {
				r = agentReply{Err: err.Error()}
				break
			}
			r.OK = true
			for _, t := range res.Tools {
				r.Tools = append(r.Tools, t.Name)
			}
			r.ToolDefs, _ = json.Marshal(res.Tools)
			mu.Lock()
			r.Changes = changes
			mu.Unlock()
		case "close":
			if session != nil {
				session.Close()
				session = nil
			}
			r = agentReply{OK: true}
		case "exec":
			// Become another program in the same process (same pid and
			// start time). No reply: the new image answers from now on.
			err := syscall.Exec(c.Tool, []string{c.Tool, "-test.run=^$"}, os.Environ())
			r = agentReply{Err: "exec: " + err.Error()}
		case "kill-shim":
			if shim != nil && shim.Process != nil {
				shim.Process.Signal(syscall.SIGKILL)
			}
			if session != nil {
				session.Close()
				session = nil
			}
			r = agentReply{OK: true}
		default:
			r = agentReply{Err: "unknown op"}
		}
		out.Encode(r)
	}
	if session != nil {
		session.Close()
	}
}

// agent drives one agent process from a test.
type agent struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    *json.Encoder
	out   *bufio.Scanner
	stdin interface{ Close() error }
}

func startAgent(t testing.TB, runtimeDir string) *agent {
	t.Helper()
	return startAgentAt(t, runtimeDir, os.Args[0])
}

// startAgentAt runs the agent from the executable at bin (a copy of this
// test binary, for tests that change it on disk).
func startAgentAt(t testing.TB, runtimeDir, bin string) *agent {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), "YETT_TEST_AGENT=1", "YETT_BIN="+yettBin, "YETT_RUNTIME_DIR="+runtimeDir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &prefixWriter{t: t, prefix: "agent: "}
	cmd.Stderr = stderr // the agent's and its shim's stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, cmd: cmd, in: json.NewEncoder(stdin), out: bufio.NewScanner(stdout), stdin: stdin}
	a.out.Buffer(make([]byte, 1<<20), 1<<20)
	t.Cleanup(func() {
		a.kill()
		if strings.Contains(stderr.String(), canary) {
			t.Error("canary in the agent's or the shim's stderr")
		}
	})
	return a
}

func (a *agent) do(c agentCmd) agentReply {
	a.t.Helper()
	if err := a.in.Encode(c); err != nil {
		a.t.Fatalf("agent %s: %v", c.Op, err)
	}
	done := make(chan bool, 1)
	go func() { done <- a.out.Scan() }()
	select {
	case ok := <-done:
		if !ok {
			a.t.Fatalf("agent %s: no reply", c.Op)
		}
	case <-time.After(testWait):
		a.t.Fatalf("agent %s: no reply within %v", c.Op, testWait)
	}
	var r agentReply
	if err := json.Unmarshal(a.out.Bytes(), &r); err != nil {
		a.t.Fatalf("agent reply %q: %v", a.out.Text(), err)
	}
	return r
}

func (a *agent) connect() {
	a.t.Helper()
	if r := a.do(agentCmd{Op: "connect"}); !r.OK {
		a.t.Fatalf("connect: %s", r.Err)
	}
}

// call sends http.request or yett.status and returns the text and isError.
func (a *agent) call(tool string, args any) agentReply {
	a.t.Helper()
	raw, _ := json.Marshal(args)
	return a.do(agentCmd{Op: "call", Tool: tool, Args: raw})
}

// callAsync sends a call without waiting for its reply; collect with wait.
func (a *agent) callAsync(tool string, args any) func() agentReply {
	raw, _ := json.Marshal(args)
	if err := a.in.Encode(agentCmd{Op: "call", Tool: tool, Args: raw}); err != nil {
		a.t.Fatal(err)
	}
	ch := make(chan agentReply, 1)
	go func() {
		var r agentReply
		if a.out.Scan() {
			json.Unmarshal(a.out.Bytes(), &r)
		} else {
			r.Err = "agent gone"
		}
		ch <- r
	}()
	return func() agentReply {
		select {
		case r := <-ch:
			return r
		case <-time.After(testWait):
			a.t.Fatal("no reply to an async call")
			return agentReply{}
		}
	}
}

func (a *agent) kill() {
	if a.cmd.ProcessState == nil && a.cmd.Process != nil {
		a.cmd.Process.Kill()
		a.cmd.Wait()
	}
}

type prefixWriter struct {
	t      testing.TB
	prefix string
	mu     sync.Mutex
	all    strings.Builder
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.all.Write(p)
	w.mu.Unlock()
	return len(p), nil
}

func (w *prefixWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.all.String())
}

// rawLoop runs c.N http.request calls over a shim of its own, speaking
// newline-delimited JSON-RPC by hand, one call at a time.
func rawLoop(c agentCmd) agentReply {
	shim := exec.Command(os.Getenv("YETT_BIN"), "mcp")
	shim.Stderr = os.Stderr
	in, _ := shim.StdinPipe()
	out, _ := shim.StdoutPipe()
	if err := shim.Start(); err != nil {
		return agentReply{Err: err.Error()}
	}
	defer func() { in.Close(); shim.Wait() }()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	// next returns the answer to request id, skipping notifications.
	next := func(id int) (map[string]json.RawMessage, error) {
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				return nil, fmt.Errorf("bad line %q", sc.Text())
			}
			if string(m["id"]) == fmt.Sprint(id) {
				return m, nil
			}
		}
		return nil, fmt.Errorf("shim closed: %v", sc.Err())
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if _, err := next(1); err != nil {
		return agentReply{Err: err.Error()}
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var tmpl map[string]any
	json.Unmarshal(c.Args, &tmpl)
	base := fmt.Sprint(tmpl["idempotency_key"])
	var r agentReply
	start := time.Now()
	for i := 0; i < c.N; i++ {
		tmpl["idempotency_key"] = fmt.Sprintf("%s-%d-%d", base, os.Getpid(), i)
		args, _ := json.Marshal(tmpl)
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", i+2, c.Tool, args)
		m, err := next(i + 2)
		if err != nil {
			return agentReply{Err: err.Error(), Failed: r.Failed + 1}
		}
		if m["error"] != nil || strings.Contains(string(m["result"]), `"isError":true`) {
			if r.Failed == 0 {
				r.Text = string(m["result"]) + string(m["error"])
			}
			r.Failed++
		}
	}
	r.OK, r.Nanos = true, time.Since(start).Nanoseconds()
	return r
}
