package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/rpcframe"
	"github.com/yettdev/yett/internal/testsupport/yettbuild"
)

// testRoles are programs this test binary becomes when re-executed with
// $YETT_TEST_ROLE naming one (files for one OS add theirs in init).
var testRoles = map[string]func() int{}

// yettBin is the yett binary built once for the subprocess tests.
var yettBin string

func TestMain(m *testing.M) {
	if role := testRoles[os.Getenv("YETT_TEST_ROLE")]; role != nil {
		os.Exit(role())
	}
	if os.Getenv(agentRole) != "" {
		os.Exit(agentMain())
	}
	// Where no Go toolchain runs (the Windows tests under Wine), the
	// runner builds yett beforehand and names it here.
	if bin := os.Getenv("YETT_TEST_YETT_BINARY"); bin != "" {
		yettBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "yett-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	yettBin = filepath.Join(dir, "yett")
	build := yettbuild.Command("-o", yettBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building yett:", err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentRole makes this test binary, re-executed with it set, an MCP agent
// that starts the yett mcp at $YETT_TEST_AGENT_YETT, makes one http.request
// with the arguments in $YETT_TEST_AGENT_ARGS and prints the answer's text:
// an agent that can run as another user (TestMain dispatches it).
const agentRole = "YETT_TEST_AGENT_ARGS"

func agentMain() int {
	var args map[string]any
	if err := json.Unmarshal([]byte(os.Getenv(agentRole)), &args); err != nil {
		fmt.Fprintln(os.Stderr, "agent: bad arguments:", err)
		return 2
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shim := exec.Command(os.Getenv("YETT_TEST_AGENT_YETT"), "mcp")
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: shim}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	defer s.Close()
	// "_tool" names another tool than http.request (an upstream
	// server's), which the agent waits to see listed first.
	tool := "http.request"
	if t, ok := args["_tool"].(string); ok {
		tool = t
		delete(args, "_tool")
		for listed := false; !listed; {
			res, err := s.ListTools(ctx, nil)
			if err != nil {
				fmt.Fprintln(os.Stderr, "agent:", err)
				return 1
			}
			for _, lt := range res.Tools {
				listed = listed || lt.Name == tool
			}
			if !listed {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			fmt.Print(tc.Text)
		}
	}
	return 0
}

// shimCmd is `yett mcp` with its runtime directory set to dir.
func shimCmd(dir string) *exec.Cmd {
	cmd := exec.Command(yettBin, "mcp")
	cmd.Env = append(os.Environ(), "YETT_RUNTIME_DIR="+dir)
	return cmd
}

// waitExit waits (bounded) for cmd and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("yett mcp did not exit")
	}
	return cmd.ProcessState.ExitCode()
}

func TestMCPNotRunningSDKClient(t *testing.T) {
	dir := t.TempDir()
	cmd := shimCmd(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err == nil {
		session.Close()
		t.Fatal("initialize succeeded with no gateway")
	}
	if !strings.Contains(err.Error(), notRunningMessage) {
		t.Fatalf("client error %q does not carry %q", err, notRunningMessage)
	}
	// The client may show only this error: it says where the shim looked.
	if !strings.Contains(err.Error(), filepath.Join(dir, gatewaySocketName)+" ($YETT_RUNTIME_DIR)") {
		t.Fatalf("client error %q does not name the place tried", err)
	}
	if cmd.ProcessState == nil {
		waitExit(t, cmd)
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("shim exited 0 without a gateway")
	}
	if !strings.Contains(stderr.String(), "Yett is not running") {
		t.Errorf("stderr %q lacks the hint", stderr.String())
	}
}

func TestMCPNotRunningRaw(t *testing.T) {
	tests := []struct {
		name, stdin string
		wantIDs     []string // nil: no reply at all
	}{
		{"request after a notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":"abc","method":"tools/list"}` + "\n", []string{`"abc"`}},
		{"every request answered", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call"}` + "\n", []string{"1", "2"}},
		{"notifications only", `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", nil},
		{"garbage", "not json\n", []string{"null"}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"initialize"}]` + "\n", []string{"null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := shimCmd(t.TempDir())
			cmd.Stdin = strings.NewReader(tt.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if tt.wantIDs == nil {
				if stdout.Len() != 0 {
					t.Fatalf("answered a notification: %q", stdout.String())
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if len(lines) != len(tt.wantIDs) {
				t.Fatalf("stdout %q, want %d replies", stdout.String(), len(tt.wantIDs))
			}
			for i, id := range tt.wantIDs {
				if !strings.Contains(lines[i], `"id":`+id) || !strings.Contains(lines[i], "Yett is not running") {
					t.Fatalf("reply %d: %q", i, lines[i])
				}
			}
		})
	}
}

// gatewayListener listens on <dir>/gateway.sock like the real gateway.
// startPiped starts cmd (a shim) with its stdin and stdout piped to the
// test and its stderr kept.
func startPiped(t *testing.T, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser, stderr *bytes.Buffer) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout, stderr
}

func gatewayListener(t testing.TB) (string, *net.UnixListener) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, gatewaySocketName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return dir, ln
}

type echoArgs struct {
	Text string `json:"text"`
}

// TestMCPThroughShimToSDKServer drives `yett mcp` with a real go-sdk
// client; behind the socket a real go-sdk server, wrapped in the policy
// point, answers. Initialize, tools/list and tools/call cross the shim both
// ways; closing the client ends the shim and the server sees the end.
func TestMCPThroughShimToSDKServer(t *testing.T) {
	dir, ln := gatewayListener(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "stub-gateway", Version: "0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echo"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo:" + in.Text}}}, nil, nil
		})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serverDone := make(chan error, 1)
	go func() {
		conn, err := ln.AcceptUnix()
		if err != nil {
			serverDone <- err
			return
		}
		ss, err := server.Connect(ctx, &rpcframe.Transport{Conn: conn}, nil)
		if err != nil {
			serverDone <- err
			return
		}
		serverDone <- ss.Wait()
	}()

	cmd := shimCmd(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through shim: %v (stderr %q)", err, stderr.String())
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through-the-shim"}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "echo:through-the-shim" {
		t.Fatalf("tool result %q", txt)
	}
	if err := session.Close(); err != nil && !errors.Is(err, io.EOF) {
		t.Logf("close: %v", err)
	}
	select {
	case <-serverDone:
	case <-time.After(10 * time.Second):
		t.Fatal("server session did not end after the agent closed the shim")
	}
	if cmd.ProcessState == nil {
		waitExit(t, cmd)
	}
	if strings.Contains(stderr.String(), "error") {
		t.Errorf("shim logged an error on a clean close: %q", stderr.String())
	}
}

// echoGateway accepts one connection, echoes n lines back, then closes.
func echoGateway(t *testing.T, ln *net.UnixListener, n int) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		for i := 0; i < n; i++ {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			conn.Write(line)
		}
	}()
	return done
}

func TestMCPPipesBytesAndExitsWhenGatewayCloses(t *testing.T) {
	dir, ln := gatewayListener(t)
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`not json at all, the shim does not care`,
		strings.Repeat("x", 200_000),
		"ünïcødé \x01 bytes",
	}
	served := echoGateway(t, ln, len(lines))
	cmd := shimCmd(dir)
	stdin, stdout, stderr := startPiped(t, cmd)
	go func() {
		for _, l := range lines {
			io.WriteString(stdin, l+"\n")
		}
	}()
	got, err := io.ReadAll(stdout) // ends when the shim exits
	if err != nil {
		t.Fatal(err)
	}
	<-served
	if want := strings.Join(lines, "\n") + "\n"; string(got) != want {
		t.Fatalf("stdout differs from what the gateway sent (%d vs %d bytes)", len(got), len(want))
	}
	if code := waitExit(t, cmd); code != 1 {
		t.Errorf("exit %d after the gateway closed, want 1", code)
	}
	if !strings.Contains(stderr.String(), "gateway closed the connection") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestMCPExitsWhenAgentClosesStdin(t *testing.T) {
	dir, ln := gatewayListener(t)
	sawEOF := make(chan struct{})
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, conn)
		close(sawEOF)
	}()
	cmd := shimCmd(dir)
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	stdin.Close()
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	select {
	case <-sawEOF:
	case <-time.After(10 * time.Second):
		t.Fatal("gateway did not see the connection end")
	}
}

// A client that starts the shim with a filtered environment (Codex keeps
// HOME, LANG, PATH, SHELL and TERM) still reaches the gateway: without
// $XDG_RUNTIME_DIR or any YETT_ variable the shim looks in the user's
// runtime directory and then the data directory under HOME, the places
// `yett serve` chooses from in that environment.
func TestMCPFindsTheGatewayWithAFilteredEnvironment(t *testing.T) {
	home := t.TempDir()
	run := filepath.Join(home, ".local", "share", "yett", "run")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(run, gatewaySocketName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done := echoGateway(t, ln, 1)
	cmd := exec.Command(yettBin, "mcp")
	cmd.Env = []string{"HOME=" + home, "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"), "SHELL=/bin/sh", "TERM=dumb"}
	stdin, stdout, stderr := startPiped(t, cmd)
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	io.WriteString(stdin, ping)
	got, _ := bufio.NewReader(stdout).ReadString('\n')
	stdin.Close()
	waitExit(t, cmd)
	<-done
	if got != ping {
		t.Fatalf("the shim did not reach the gateway under HOME: stdout %q, stderr %q", got, stderr.String())
	}
}

// `yett mcp --help` explains itself and exits 0 (a client that probes a
// server with --help must not read an error).
func TestMCPHelp(t *testing.T) {
	for _, flag := range []string{"--help", "-h"} {
		out, err := exec.Command(yettBin, "mcp", flag).Output()
		if err != nil || !strings.HasPrefix(string(out), "usage: yett mcp\n") || !strings.Contains(string(out), "/run/user/UID/yett") {
			t.Fatalf("yett mcp %s: %v\n%s", flag, err, out)
		}
	}
	if err := exec.Command(yettBin, "mcp", "extra").Run(); err == nil {
		t.Fatal("yett mcp with an argument exited 0")
	}
}
