package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/vault"
)

// Closing the window keeps Yett serving agents: the first close is held
// while the person is told (and chooses to keep Yett running), the next
// is held too (the window hides: build/scripts/window-test.sh proves the
// real window goes), and a real agent's call through the real shim then
// gets its card and is released when the person approves. With no
// notification server on the bus, the card asks for the window instead.
// Only an explicit quit lets the close through.
func TestClosedWindowKeepsServingAgents(t *testing.T) {
	bin := buildYett(t)
	base, err := os.MkdirTemp("", "yd") // short: the socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	var logs bytes.Buffer
	var logMu sync.Mutex
	a, err := New(Config{
		DataDir: filepath.Join(base, "data"), RuntimeDir: filepath.Join(base, "run"),
		Log: slog.New(slog.NewTextHandler(lockedBuffer{&logMu, &logs}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if _, err := a.Vault.Create("correct horse battery staple", false); err != nil {
		t.Fatal(err)
	}
	addr, got := startCardReceiver(t)
	if _, err := a.vault.Credentials().Add(vault.NewCredential{
		Name: "receiver", Secret: vault.NewSecret([]byte(gatewayCanary)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{addr}, Approval: vault.ApprovalSession,
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return a.Approvals.current() != nil })
	// No notification server on this bus: nothing to trust or accept.
	if ns := a.Desktop.Settings().NotificationServer; ns != (NotificationServerView{Trusted: true}) {
		t.Fatalf("Settings shows the notification server %+v with none on the bus", ns)
	}
	if _, err := a.Desktop.AcceptNotificationServer(":1.5"); !errors.Is(err, keeper.ErrServerChanged) {
		t.Fatalf("accepting a server that does not exist: %v", err)
	}

	ctx := context.Background()
	if !a.beforeClose(ctx) {
		t.Fatal("the first close quit Yett")
	}
	a.Desktop.KeepRunningInBackground() // the person's choice in the notice
	if !a.beforeClose(ctx) {
		t.Fatal("closing the window quit Yett")
	}
	var prefs desktopPrefs
	if b, err := os.ReadFile(filepath.Join(base, "data", desktopPrefsFile)); err != nil || json.Unmarshal(b, &prefs) != nil || !prefs.BackgroundNoticeSeen {
		t.Fatalf("the person's choice was not kept: %v %+v", err, prefs)
	}
	logMu.Lock()
	hidden := strings.Contains(logs.String(), "window hidden; Yett keeps serving agents")
	logMu.Unlock()
	if !hidden {
		t.Fatal("the window was not hidden")
	}

	agent := exec.Command(os.Args[0], "-test.run=^$")
	agent.Env = append(os.Environ(), "YETT_APP_TEST_AGENT=1", "YETT_BIN="+bin, "YETT_RUNTIME_DIR="+filepath.Join(base, "run"),
		"YETT_AGENT_URL=http://"+addr+"/while-hidden")
	agentIn, _ := agent.StdinPipe()
	agentOut, _ := agent.StdoutPipe()
	var agentErr bytes.Buffer
	agent.Stderr = &agentErr
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		agentIn.Close()
		agent.Process.Kill()
		agent.Wait()
	})
	replies := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(agentOut).ReadString('\n')
		replies <- line
	}()

	var card string
	waitFor(t, func() bool {
		if p := a.Approvals.current().Pending(); len(p) == 1 {
			card = p[0].ID
			return true
		}
		return false
	})
	// No notification server: the card asks for the window.
	waitFor(t, func() bool {
		a.desk.mu.Lock()
		defer a.desk.mu.Unlock()
		return a.desk.raiseQueued && a.desk.pending == card
	})
	if err := a.Approvals.Answer(card, true); err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Text    string `json:"text"`
		IsError bool   `json:"is_error"`
		Err     string `json:"err"`
	}
	select {
	case line := <-replies:
		if err := json.Unmarshal([]byte(line), &reply); err != nil {
			t.Fatalf("agent said %q (stderr %s)", line, agentErr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the agent's call never returned (stderr %s)", agentErr.String())
	}
	if reply.Err != "" || reply.IsError || got.n.Load() != 1 || got.withCredential.Load() != 1 {
		t.Fatalf("reply %+v, receiver saw %d calls (%d with the credential)", reply, got.n.Load(), got.withCredential.Load())
	}

	a.quit()
	if a.beforeClose(ctx) {
		t.Fatal("after quit, the close was still held")
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), gatewayCanary) {
		t.Fatal("the credential reached the app's log")
	}
}
