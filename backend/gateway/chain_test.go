//go:build unix

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/procid"
)

// The programs of these tests are this test binary re-executed with
// $YETT_CHAIN_ROLE set. init dispatches them (before TestMain, which the
// other helpers of this package share):
//
//	poser-agent: an agent that runs a program (the poser) as a command.
//	poser:       the attack of issue 9, item 6: starts a background driver
//	             holding pipes to itself, then execs the genuine `yett mcp`
//	             on them.
//	driver:      an MCP client on its own stdin and stdout (the shim's
//	             pipes); makes one http.request, writes the answer to
//	             $YETT_CHAIN_OUT and stays connected until it is killed.
//	exec-agent:  an MCP client (raw JSON-RPC) whose pipes to its shim survive
//	             exec, so that after it re-executes its own file with other
//	             arguments (issue 9, item 7) the new program uses the
//	             approved connection.
func init() {
	role := os.Getenv("YETT_CHAIN_ROLE")
	if role == "" {
		return
	}
	var err error
	switch role {
	case "poser-agent":
		err = poserAgentMain()
	case "poser":
		err = poserMain()
	case "driver":
		err = driverMain()
	case "exec-agent":
		err = execAgentMain(nil, nil)
	case "exec-agent-after":
		err = execAgentAfterMain()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		os.Exit(3)
	}
	os.Exit(0)
}

// setEnv returns env with key set to value; syscall.Exec does not
// de-duplicate the environment and the first of two wins.
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

func poserAgentMain() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	poser := exec.Command(self)
	poser.Env = setEnv(os.Environ(), "YETT_CHAIN_ROLE", "poser")
	poser.Stdout, poser.Stderr = os.Stdout, os.Stderr
	if err := poser.Start(); err != nil {
		return err
	}
	fmt.Printf("poser %d\n", poser.Process.Pid)
	io.Copy(io.Discard, os.Stdin)
	poser.Process.Kill()
	poser.Wait()
	return nil
}

func poserMain() error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	driver := exec.Command(self)
	driver.Env = setEnv(os.Environ(), "YETT_CHAIN_ROLE", "driver")
	driver.Stdin, driver.Stdout, driver.Stderr = outR, inW, os.Stderr
	if err := driver.Start(); err != nil {
		return err
	}
	fmt.Printf("driver %d\n", driver.Process.Pid)
	if err := unix.Dup2(int(inR.Fd()), 0); err != nil {
		return err
	}
	if err := unix.Dup2(int(outW.Fd()), 1); err != nil {
		return err
	}
	bin := os.Getenv("YETT_BIN")
	return syscall.Exec(bin, []string{bin, "mcp"}, setEnv(os.Environ(), "YETT_CHAIN_ROLE", ""))
}

func driverMain() error {
	client := mcp.NewClient(&mcp.Implementation{Name: "driver", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: os.Stdout}, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	var args map[string]any
	json.Unmarshal([]byte(os.Getenv("YETT_CHAIN_ARGS")), &args)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: agentapi.ToolHTTPRequest, Arguments: args})
	out := ""
	if err != nil {
		out = "error: " + err.Error()
	} else {
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				out += t.Text
			}
		}
	}
	if err := os.WriteFile(os.Getenv("YETT_CHAIN_OUT"), []byte(out), 0o600); err != nil {
		return err
	}
	// Stay connected, so the run (and the session approved for it) lives
	// until the test has read the sessions: the test kills the driver, or
	// the gateway's end closes the shim and with it this connection. An
	// exit here ended the run before the test looked, in 6 of 8 runs
	// without -race.
	return s.Wait()
}

// chainProc is one of this file's programs, started by the test.
type chainProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startExecAgent starts the exec-agent role, waits for it to be ready and
// returns it with a function that sends it one command line.
func startExecAgent(t *testing.T, w *world) (*chainProc, func(string)) {
	t.Helper()
	a := startChain(t, w, "exec-agent")
	if l := a.line(); l != "ready" {
		t.Fatalf("exec-agent said %q", l)
	}
	return a, func(s string) {
		if _, err := io.WriteString(a.stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func startChain(t *testing.T, w *world, role string, env ...string) *chainProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "YETT_CHAIN_ROLE="+role, "YETT_BIN="+yettBin, "YETT_RUNTIME_DIR="+w.runDir)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = &prefixWriter{t: t, prefix: role + ": "}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &chainProc{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return p
}

// line reads the next line the program writes.
func (p *chainProc) line() string {
	p.t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := p.out.ReadString('\n')
		ch <- strings.TrimSpace(l)
	}()
	select {
	case l := <-ch:
		return l
	case <-time.After(testWait):
		p.t.Fatal("no line from the program")
		return ""
	}
}

// pidLine reads "word <pid>".
func (p *chainProc) pidLine(word string) int {
	p.t.Helper()
	l := p.line()
	w, n, _ := strings.Cut(l, " ")
	pid, err := strconv.Atoi(n)
	if w != word || err != nil {
		p.t.Fatalf("got %q, want %q <pid>", l, word)
	}
	return pid
}

// TestChainPoserCardNamesDriver is issue 9, item 6 through the real shim
// and gateway: a command the agent ran starts a background driver and
// execs the pinned `yett mcp` on pipes the driver holds. The card must not
// name the agent: the process that holds the shim's stdio asks.
func TestChainPoserCardNamesDriver(t *testing.T) {
	w := newWorld(t, worldOpts{})
	id := tag("poser")
	args, _ := json.Marshal(w.req(id))
	out := t.TempDir() + "/driver-answer"
	a := startChain(t, w, "poser-agent", "YETT_CHAIN_ARGS="+string(args), "YETT_CHAIN_OUT="+out)
	var shimPID, driverPID int
	for range 2 { // the two lines come from two processes, in either order
		l := a.line()
		w, n, _ := strings.Cut(l, " ")
		pid, _ := strconv.Atoi(n)
		switch w {
		case "poser":
			shimPID = pid
		case "driver":
			driverPID = pid
		default:
			t.Fatalf("unexpected line %q", l)
		}
	}
	t.Cleanup(func() { syscall.Kill(driverPID, syscall.SIGKILL) })
	agentPID := a.cmd.Process.Pid

	card := w.pending(approval.KindSession)
	if card.Who.PID == agentPID {
		t.Fatalf("the card names the agent (pid %d) while its child's driver (pid %d) holds yett mcp's stdio: %+v", agentPID, driverPID, card.Who)
	}
	if card.Who.PID != driverPID {
		t.Fatalf("the card names pid %d, want the driver %d (agent %d, shim %d)", card.Who.PID, driverPID, agentPID, shimPID)
	}
	// The card shows the real chain: the shim, the agent that started it
	// (apart from who asks) and that the asker did not start the shim.
	wantStdio := procid.StdioHeldNotParent
	if runtime.GOOS != "linux" {
		wantStdio = procid.StdioNotChecked
	}
	if card.Who.Stdio != wantStdio {
		t.Errorf("card stdio %q, want %q", card.Who.Stdio, wantStdio)
	}
	if card.Who.ShimPID != shimPID || card.Who.ShimParentPID != agentPID || card.Who.ShimParentStartedAt.IsZero() ||
		!strings.Contains(card.Who.ShimParentCmdLine, os.Args[0]) {
		t.Errorf("card chain: shim %d parent %d %q started %v; want shim %d started by the agent %d",
			card.Who.ShimPID, card.Who.ShimParentPID, card.Who.ShimParentCmdLine, card.Who.ShimParentStartedAt, shimPID, agentPID)
	}
	// Approving binds the session to the driver's run, not the agent's.
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testWait)
	for {
		b, _ := os.ReadFile(out)
		if strings.Contains(string(b), `"status":200`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the driver's call did not go through: %q", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sessions := w.gw.Broker().Sessions()
	if len(sessions) != 1 || sessions[0].Who.PID != driverPID {
		t.Fatalf("sessions %+v, want one for the driver %d", sessions, driverPID)
	}
}

// TestChainGenuineCard: an ordinary MCP client starts `yett mcp` on pipes
// it holds; the card names it.
func TestChainGenuineCard(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	pid := a.do(agentCmd{Op: "pid"}).PID
	a.connect()
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag("genuine")))
	card := w.approveNext()
	mustContain(t, wait(), `"status":200`)
	if card.Who.PID != pid {
		t.Fatalf("card names pid %d, want the agent %d", card.Who.PID, pid)
	}
	wantStdio := procid.StdioHeld
	if runtime.GOOS != "linux" {
		wantStdio = procid.StdioNotChecked
	}
	if card.Who.Stdio != wantStdio || card.Who.ShimParentPID != pid || card.Who.ShimPID == 0 || card.Who.ShimPID == pid ||
		!strings.Contains(card.Who.ShimParentCmdLine, os.Args[0]) {
		t.Errorf("card chain: stdio %q shim %d started by %d (%q); want %q, the agent %d",
			card.Who.Stdio, card.Who.ShimPID, card.Who.ShimParentPID, card.Who.ShimParentCmdLine, wantStdio, pid)
	}
}

// execAgent keeps its pipes to the shim open across exec (the descriptors
// carry no close-on-exec flag, as in a shell script's coprocess) and speaks
// JSON-RPC on them line by line. It reads commands from stdin:
// "call <args>" sends an http.request and prints the answer's text,
// "exec" re-executes this file with other arguments.
func execAgentMain(toShim, fromShim *os.File) error {
	first := toShim == nil
	if first {
		inR, inW, err := os.Pipe()
		if err != nil {
			return err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			return err
		}
		shim := exec.Command(os.Getenv("YETT_BIN"), "mcp")
		shim.Stdin, shim.Stdout, shim.Stderr = inR, outW, os.Stderr
		if err := shim.Start(); err != nil {
			return err
		}
		inR.Close()
		outW.Close()
		toShim, fromShim = inW, outR
	}
	rpc := &lineRPC{w: toShim, r: bufio.NewReader(fromShim)}
	if first {
		if _, err := rpc.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "exec-agent", "version": "0"}}); err != nil {
			return err
		}
		rpc.notify("notifications/initialized")
		fmt.Println("ready")
	} else {
		fmt.Println("execd")
	}
	cmds := bufio.NewScanner(os.Stdin)
	cmds.Buffer(make([]byte, 1<<20), 1<<20)
	for cmds.Scan() {
		verb, rest, _ := strings.Cut(cmds.Text(), " ")
		switch verb {
		case "call":
			var args map[string]any
			json.Unmarshal([]byte(rest), &args)
			res, err := rpc.call("tools/call", map[string]any{"name": agentapi.ToolHTTPRequest, "arguments": args})
			if err != nil {
				fmt.Println("error:", err)
				continue
			}
			fmt.Println(string(res))
		case "send":
			// A call whose answer is read later, maybe by the program
			// this one execs into ("await").
			var args map[string]any
			json.Unmarshal([]byte(rest), &args)
			id, err := rpc.send("tools/call", map[string]any{"name": agentapi.ToolHTTPRequest, "arguments": args})
			if err != nil {
				fmt.Println("error:", err)
				continue
			}
			fmt.Println("sent", id)
		case "await":
			id, _ := strconv.Atoi(rest)
			res, err := rpc.await(id)
			if err != nil {
				fmt.Println("error:", err)
				continue
			}
			fmt.Println(string(res))
		case "exec":
			for _, f := range []*os.File{toShim, fromShim} {
				if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
					return err
				}
			}
			env := setEnv(os.Environ(), "YETT_CHAIN_ROLE", "exec-agent-after")
			env = setEnv(env, "YETT_CHAIN_FDS", fmt.Sprintf("%d,%d", toShim.Fd(), fromShim.Fd()))
			self, _ := os.Executable()
			return syscall.Exec(self, []string{"exec-agent", "--another-program"}, env)
		}
	}
	return nil
}

func execAgentAfterMain() error {
	a, b, _ := strings.Cut(os.Getenv("YETT_CHAIN_FDS"), ",")
	to, err1 := strconv.Atoi(a)
	from, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("bad YETT_CHAIN_FDS")
	}
	return execAgentMain(os.NewFile(uintptr(to), "to-shim"), os.NewFile(uintptr(from), "from-shim"))
}

// lineRPC is newline-delimited JSON-RPC with the ids it sends counted
// from a per-process base, so the program after exec does not reuse one.
type lineRPC struct {
	w    io.Writer
	r    *bufio.Reader
	next int
}

func (c *lineRPC) notify(method string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	c.w.Write(append(b, '\n'))
}

func (c *lineRPC) call(method string, params any) (json.RawMessage, error) {
	id, err := c.send(method, params)
	if err != nil {
		return nil, err
	}
	return c.await(id)
}

// send writes a request and returns its id.
func (c *lineRPC) send(method string, params any) (int, error) {
	c.next++
	id := os.Getpid()%1000*1000 + c.next
	if os.Getenv("YETT_CHAIN_ROLE") == "exec-agent-after" {
		id += 500
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	_, err := c.w.Write(append(b, '\n'))
	return id, err
}

// await reads until the answer to request id.
func (c *lineRPC) await(id int) (json.RawMessage, error) {
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || *m.ID != id {
			continue // a notification, such as tools/list_changed
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s", m.Error)
		}
		return m.Result, nil
	}
}

// TestChainExecSameBinaryEndsApproval is issue 9, item 7 through the real
// shim and gateway: an approved agent re-executes its own file with other
// arguments (same pid, same start time, same executable) and goes on
// using the connection. The call must be refused, and nothing sent.
func TestChainExecSameBinaryEndsApproval(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a, send := startExecAgent(t, w)
	args, _ := json.Marshal(w.req(tag("before-exec")))
	send("call " + string(args))
	w.approveNext()
	if l := a.line(); !strings.Contains(l, `\"status\":200`) {
		t.Fatalf("approved call: %s", l)
	}
	send("exec")
	if l := a.line(); l != "execd" {
		t.Fatalf("after exec: %q", l)
	}
	id := tag("after-exec")
	args, _ = json.Marshal(w.req(id))
	send("call " + string(args))
	l := a.line()
	if !strings.Contains(l, "REAUTH_REQUIRED process_changed") {
		t.Fatalf("a call from another program in the approved process was answered %s", l)
	}
	w.settleAbsent(id)

	// Issue 19, item 2: the agent is told once, and the person has a card
	// at once, for the program the process runs now, saying exactly what
	// changed. The agent's next call waits on that card, and is sent only
	// once the person approved it.
	card := w.pending(approval.KindSession)
	if card.Change != approval.ChangeIdentityChanged || card.Who.PID != a.cmd.Process.Pid ||
		!strings.Contains(card.ChangeDetail, "another command line") || !strings.Contains(card.ChangeDetail, "--another-program") ||
		!strings.Contains(card.Who.CmdLine, "--another-program") {
		t.Fatalf("card after the exec: change %q, detail %q, who %+v", card.Change, card.ChangeDetail, card.Who)
	}
	again := tag("after-exec-approved")
	args, _ = json.Marshal(w.req(again))
	send("call " + string(args))
	time.Sleep(100 * time.Millisecond)
	if n := w.recv.count(t, again); n != 0 {
		t.Fatalf("the call after the exec reached the target %d times before the person answered", n)
	}
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if l := a.line(); !strings.Contains(l, `\"status\":200`) {
		t.Fatalf("the call that waited on the new run's card: %s", l)
	}
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("cards left: %+v", p)
	}
	if s := w.gw.Broker().Sessions(); len(s) != 1 || s[0].RunID != card.RunID {
		t.Fatalf("sessions %+v, want the new run's", s)
	}
}
