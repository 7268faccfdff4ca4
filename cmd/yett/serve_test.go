//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/ptytest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

const (
	servePassphrase = "serve test passphrase 1"
	serveCanary     = "CANARY-serve-4d2b8e"
)

// ttyLog collects what yett serve writes to its terminal.
type ttyLog struct{ syncbuf.Buffer }

func (l *ttyLog) waitFor(t testing.TB, s string) { l.waitForCount(t, s, 1) }

// waitForCount waits until s was written n times.
func (l *ttyLog) waitForCount(t testing.TB, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(l.String(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("terminal never showed %q; it shows:\n%s", s, l.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cardCodeRE finds a card's one-time code on yett serve's terminal.
var cardCodeRE = regexp.MustCompile(`answer:  y (\d+) ([A-Z2-9]{5})`)

// cardCode returns card n's one-time code as the screen shows it, "" when
// the card (or its code) is not there.
func cardCode(screen string, n int) string {
	for _, m := range cardCodeRE.FindAllStringSubmatch(screen, -1) {
		if m[1] == strconv.Itoa(n) {
			return m[2]
		}
	}
	return ""
}

// approveLine waits for card n and returns the line that approves it.
func (l *ttyLog) approveLine(t testing.TB, n int) string {
	t.Helper()
	l.waitFor(t, fmt.Sprintf("answer:  y %d ", n))
	return fmt.Sprintf("y %d %s", n, cardCode(l.String(), n))
}

// serveWorld is a vault with a credential bound to a receiver, and
// `yett serve` running on a pseudo-terminal as its controlling terminal.
type serveWorld struct {
	dataDir, runDir  string
	recvURL, recvLog string
	master           *os.File
	tty              *ttyLog
	stdin            io.WriteCloser
	stderr           *ttyLog
	cmd              *exec.Cmd
}

func startServe(t *testing.T) *serveWorld {
	t.Helper()
	return startServeSeeded(t, nil)
}

// startServeSeeded runs seed on the unlocked vault before yett serve starts,
// as the app would have left it.
func startServeSeeded(t *testing.T, seed func(dataDir string, v *vault.Vault)) *serveWorld {
	t.Helper()
	base, err := os.MkdirTemp("", "ysv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &serveWorld{dataDir: filepath.Join(base, "data"), runDir: filepath.Join(base, "run")}
	w.recvURL, w.recvLog = startReceiver(t)
	v, err := vault.Open(w.dataDir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Create(vault.Passphrase(servePassphrase), false); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(w.recvURL, "http://")
	if _, err := v.Credentials().Add(vault.NewCredential{Name: "receiver", Secret: vault.NewSecret([]byte(serveCanary)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{host}, Approval: vault.ApprovalSession}); err != nil {
		t.Fatal(err)
	}
	if seed != nil {
		seed(w.dataDir, v)
	}
	v.Close()

	master, slave := ptytest.Open(t)
	w.master = master
	w.tty, w.stderr = &ttyLog{}, &ttyLog{}
	go io.Copy(w.tty, master)
	w.cmd = exec.Command(yettBin, "serve", "--approval-timeout", "20s")
	w.cmd.Env = append(os.Environ(), "YETT_DATA_DIR="+w.dataDir, "YETT_RUNTIME_DIR="+w.runDir)
	w.stdin, _ = w.cmd.StdinPipe()
	w.cmd.Stdout, w.cmd.Stderr = w.stderr, w.stderr
	ptytest.Attach(w.cmd, slave)
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.cmd.Process.Signal(syscall.SIGTERM)
		w.cmd.Wait()
		for name, out := range map[string]string{"terminal": w.tty.String(), "stderr": w.stderr.String()} {
			if strings.Contains(out, serveCanary) || strings.Contains(out, servePassphrase) {
				t.Errorf("secret in yett serve's %s", name)
			}
		}
	})
	w.tty.waitFor(t, "passphrase:")
	return w
}

func (w *serveWorld) typeLine(t *testing.T, s string) {
	t.Helper()
	if _, err := w.master.Write([]byte(s + "\n")); err != nil {
		t.Fatal(err)
	}
}

func (w *serveWorld) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: shimCmd(w.runDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestServeTerminalApproval: the passphrase is read at the terminal with
// echo off, a card shows who asks, an answer written to stdin does nothing,
// and the answer typed at the terminal lets the call through once.
func TestServeTerminalApproval(t *testing.T) {
	w := startServe(t)
	w.typeLine(t, servePassphrase)
	w.tty.waitFor(t, "gateway listening")
	s := w.connect(t)
	type result struct {
		text    string
		isError bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "http.request", Arguments: map[string]any{
			"method": "POST", "url": w.recvURL + "/serve-1", "headers": map[string]string{"X-Replay-Test-Id": "serve-1"}, "body": "hello",
		}})
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{text: callText(res), isError: res.IsError}
	}()
	w.tty.waitFor(t, "[1] Approve this agent run? (first request)")
	approve := w.tty.approveLine(t, 1)
	if !strings.Contains(w.tty.String(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("card does not name the origin process:\n%s", w.tty.String())
	}
	// The terminal card says, as the app's does, who holds yett mcp's
	// input and output.
	if !strings.Contains(w.tty.String(), "stdio:   ok This process started yett mcp and holds its input and output.") {
		t.Errorf("card does not say who holds the shim's stdio:\n%s", w.tty.String())
	}
	// stdin is not the approval channel.
	io.WriteString(w.stdin, approve+"\n")
	select {
	case r := <-done:
		t.Fatalf("the call went on without a terminal answer: %+v", r)
	case <-time.After(500 * time.Millisecond):
	}
	w.typeLine(t, approve)
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no answer after approval")
	}
	if r.err != nil || r.isError || !strings.Contains(r.text, `"status":200`) {
		t.Fatalf("call: %+v", r)
	}
	if strings.Contains(r.text, serveCanary) {
		t.Fatal("canary reached the agent")
	}
	if evs := readEvents(t, w.recvLog); len(evs) != 1 || evs[0]["request_id"] != "serve-1" {
		t.Fatalf("receiver saw %v", evs)
	}
	w.typeLine(t, "sessions")
	w.tty.waitFor(t, "1. ")
	// Lock at the terminal: calls are refused with LOCKED.
	w.typeLine(t, "lock")
	w.tty.waitFor(t, "Vault locked")
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "http.request", Arguments: map[string]any{"method": "GET", "url": w.recvURL + "/serve-2"}})
	if err != nil || !strings.HasPrefix(callText(res), "LOCKED") {
		t.Fatalf("locked call: %v %v", err, res)
	}
	if strings.Contains(w.tty.String(), servePassphrase) {
		t.Fatal("the passphrase was echoed")
	}
}

// TestServeTerminalSaysHowCardsEnd (issue 19, item 5): each card the
// terminal showed ends with one line saying how: a lock withdraws it and the
// person reads why (before, only "[N] closed."), an approval at the terminal
// reads "approved." once, never "closed." first. And the log line scripts
// wait for, "agent gateway listening", comes only once the vault is
// unlocked: before the passphrase is typed, the log says calls are refused.
func TestServeTerminalSaysHowCardsEnd(t *testing.T) {
	w := startServe(t)
	if strings.Contains(w.stderr.String(), "agent gateway listening") {
		t.Fatalf("the log says the gateway listens before the passphrase was typed:\n%s", w.stderr.String())
	}
	w.typeLine(t, servePassphrase)
	w.tty.waitFor(t, "gateway listening")
	w.stderr.waitFor(t, "agent gateway listening")
	s := w.connect(t)
	call := func(id string) chan string {
		done := make(chan string, 1)
		go func() {
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "http.request", Arguments: map[string]any{
				"method": "GET", "url": w.recvURL + "/" + id}})
			if err != nil {
				done <- "error: " + err.Error()
				return
			}
			done <- callText(res)
		}()
		return done
	}
	first := call("withdrawn")
	w.tty.waitFor(t, "[1] Approve this agent run?")
	w.typeLine(t, "lock")
	w.tty.waitFor(t, "[1] withdrawn: the vault was locked or unlocked")
	if r := <-first; !strings.Contains(r, "WITHDRAWN") && !strings.Contains(r, "LOCKED") {
		t.Fatalf("the withdrawn card's call: %s", r)
	}
	w.typeLine(t, "unlock")
	w.tty.waitForCount(t, "Yett vault passphrase: ", 2) // the first was at the start
	w.typeLine(t, servePassphrase)
	w.tty.waitFor(t, "Vault unlocked.")
	second := call("approved")
	w.tty.waitFor(t, "[2] Approve this agent run?")
	w.typeLine(t, w.tty.approveLine(t, 2))
	if r := <-second; !strings.Contains(r, `"status":200`) {
		t.Fatalf("the approved call: %s", r)
	}
	w.tty.waitFor(t, "[2] approved.")
	time.Sleep(200 * time.Millisecond)
	out := w.tty.String()
	if strings.Contains(out, "closed.") || strings.Count(out, "[2] approved") != 1 {
		t.Fatalf("the terminal said more than how each card ended:\n%s", out)
	}
}

// TestServeNeedsTerminal: without a controlling terminal yett serve refuses
// to start rather than reading a passphrase or answers from stdin.
func TestServeNeedsTerminal(t *testing.T) {
	cmd := exec.Command(yettBin, "serve")
	cmd.Env = append(os.Environ(), "YETT_DATA_DIR="+t.TempDir(), "YETT_RUNTIME_DIR="+t.TempDir())
	cmd.Stdin = strings.NewReader(servePassphrase + "\ny 1\n")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "controlling terminal") {
		t.Fatalf("err %v, output %q", err, out)
	}
}

// sameSession is what refuses, at the terminal, an agent that shares yett
// serve's terminal session (it could type its own answer).
func TestServeSameSessionCheck(t *testing.T) {
	if !sameSession(os.Getpid()) {
		t.Fatal("this process is not in its own session")
	}
	same := exec.Command("sleep", "5")
	other := exec.Command("sleep", "5")
	other.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	for _, c := range []*exec.Cmd{same, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func(c *exec.Cmd) { c.Process.Kill(); c.Wait() }(c)
	}
	if !sameSession(same.Process.Pid) {
		t.Error("a child in this session was not recognised")
	}
	if sameSession(other.Process.Pid) {
		t.Error("a process in another session was taken for this one")
	}
}

// startServePerCall is yett serve, unlocked, with a credential that asks
// on every call for a receiver at the returned URL.
func startServePerCall(t *testing.T) (*serveWorld, string) {
	t.Helper()
	perCallURL, _ := startReceiver(t)
	w := startServeSeeded(t, func(_ string, v *vault.Vault) {
		if _, err := v.Credentials().Add(vault.NewCredential{Name: "per-call receiver", Secret: vault.NewSecret([]byte(serveCanary)),
			Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{strings.TrimPrefix(perCallURL, "http://")},
			Approval: vault.ApprovalPerCall}); err != nil {
			t.Fatal(err)
		}
	})
	w.typeLine(t, servePassphrase)
	w.tty.waitFor(t, "gateway listening")
	return w, perCallURL
}

// TestServeTerminalSaysTheAgentStoppedWaiting: a per-call card for a call
// with an idempotency key stays when the client gives up on it (its own
// time limit, a cancel), and the terminal says so; the same call sent again
// joins the card, the terminal says the agent waits again, and the one
// answer lets the retry through. No second card is raised.
func TestServeTerminalSaysTheAgentStoppedWaiting(t *testing.T) {
	w, perCallURL := startServePerCall(t)
	s := w.connect(t)
	call := func(ctx context.Context) chan string {
		done := make(chan string, 1)
		go func() {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "http.request", Arguments: map[string]any{
				"method": "POST", "url": perCallURL + "/stopped-waiting", "body": "x", "idempotency_key": "stopped-waiting-1"}})
			if err != nil {
				done <- "error: " + err.Error()
				return
			}
			done <- callText(res)
		}()
		return done
	}
	ctx, giveUp := context.WithCancel(context.Background())
	first := call(ctx)
	w.typeLine(t, w.tty.approveLine(t, 1)) // the session
	w.tty.waitFor(t, "[2] Approve this one call?")
	giveUp()
	if r := <-first; !strings.Contains(r, "error") {
		t.Fatalf("the call the client gave up on: %s", r)
	}
	w.tty.waitFor(t, "[2] the agent stopped waiting (its own time limit); the card stays")
	again := call(context.Background())
	w.tty.waitFor(t, "[2] the agent is waiting again (it sent this call again).")
	w.typeLine(t, w.tty.approveLine(t, 2))
	if r := <-again; !strings.Contains(r, `"status":200`) {
		t.Fatalf("the retry that joined the card: %s", r)
	}
	w.tty.waitFor(t, "[2] approved.")
	if strings.Contains(w.tty.String(), "[3]") {
		t.Fatalf("a second card was raised for the same call:\n%s", w.tty.String())
	}
}

// TestServeTerminalGrant: at yett serve's terminal, "g N CODE" on a
// per-call card approves it and calls like it for 10 minutes: the same
// run's next call under the same prefix goes without a card, sessions
// lists the grant, "revoke g1" ends it, and the next call asks again.
func TestServeTerminalGrant(t *testing.T) {
	w, perCallURL := startServePerCall(t)
	s := w.connect(t)
	call := func(n int) chan string {
		done := make(chan string, 1)
		go func() {
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "http.request", Arguments: map[string]any{
				"method": "POST", "url": fmt.Sprintf("%s/grant/%d", perCallURL, n), "body": "x", "idempotency_key": fmt.Sprintf("grant-%d", n)}})
			if err != nil {
				done <- "error: " + err.Error()
				return
			}
			done <- callText(res)
		}()
		return done
	}
	first := call(1)
	w.typeLine(t, w.tty.approveLine(t, 1)) // the session
	w.tty.waitFor(t, "or:      g 2 ")
	w.tty.waitFor(t, "POST requests to "+strings.TrimPrefix(perCallURL, "http://")+"/grant/…")
	w.typeLine(t, "g"+strings.TrimPrefix(w.tty.approveLine(t, 2), "y"))
	if r := <-first; !strings.Contains(r, `"status":200`) {
		t.Fatalf("the granted card's call: %s", r)
	}
	w.tty.waitFor(t, "[2] approved, and POST requests to")
	if r := <-call(2); !strings.Contains(r, `"status":200`) {
		t.Fatalf("the call under the grant: %s", r)
	}
	if strings.Contains(w.tty.String(), "[3]") {
		t.Fatalf("a call under the grant raised a card:\n%s", w.tty.String())
	}
	w.typeLine(t, "sessions")
	w.tty.waitFor(t, "used 1 times")
	w.typeLine(t, "revoke g1")
	w.tty.waitFor(t, "Grant g1 ended.")
	third := call(3)
	w.tty.waitFor(t, "[3] Approve this one call?")
	w.typeLine(t, "n 3")
	if r := <-third; !strings.Contains(r, "DENIED") {
		t.Fatalf("after the revoke: %s", r)
	}
}
