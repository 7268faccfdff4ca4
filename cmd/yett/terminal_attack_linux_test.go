package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/internal/testsupport/nonroot"
)

func init() { testRoles["inject"] = injectMain }

// injectMain is an agent running in yett serve's own terminal session
// (issue 18, item 5). Once $YETT_TEST_GO1 exists it types into that
// terminal with TIOCSTI, as any process of the session may where
// dev.tty.legacy_tiocsti is 1: a harmless command first (the test sees it
// run, so the injection is real), then approvals with and without a
// guessed code. Once $YETT_TEST_GO2 exists it asks for itself through a
// helper started with setsid (out of the session, so the old same-session
// check did not see it) and writes what that helper's call got to
// $YETT_TEST_OUT.
func injectMain() int {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return 2
	}
	waitForFile(os.Getenv("YETT_TEST_GO1"))
	push := func(s string) {
		for i := 0; i < len(s); i++ {
			c := s[i]
			unix.Syscall(unix.SYS_IOCTL, tty.Fd(), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		}
		time.Sleep(100 * time.Millisecond)
	}
	push("sessions\n")
	for _, guess := range []string{"y 1\n", "y 1 AAAAA\n", "y 1 22222\n", "y 1 ZZZZZ\n"} {
		push(guess)
	}
	waitForFile(os.Getenv("YETT_TEST_GO2"))
	self, _ := os.Executable()
	helper := exec.Command("setsid", self, "-test.run=^$")
	helper.Env = append(os.Environ(), "YETT_TEST_ROLE=")
	out, _ := helper.CombinedOutput()
	os.WriteFile(os.Getenv("YETT_TEST_OUT"), out, 0o600)
	return 0
}

func waitForFile(p string) {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
}

// TestServeTerminalInjectionCannotApprove is issue 18, item 5 with real
// parts, for a person who is not root: an agent in yett serve's terminal
// session pushes keystrokes with TIOCSTI (this kernel allows it). Its "y 1"
// approved the card before; now a card needs its one-time code, which the
// injector cannot see, three wrong codes deny the card, and nothing reaches
// the target. Its own call, made through a setsid helper, is refused at the
// terminal because the helper's parent is in serve's session.
func TestServeTerminalInjectionCannotApprove(t *testing.T) {
	as := nonroot.Person(t)
	yett := as.Install(t, yettBin, "yett")
	attacker := as.Install(t, os.Args[0], "attacker")
	dataDir := filepath.Join(as.Home, "data")
	recvURL, recvLog := startReceiver(t)
	seedVault(t, dataDir, strings.TrimPrefix(recvURL, "http://"))
	chownTree(t, as, dataDir)
	flags := as.Dir(t, "flags")
	go1, go2, out := filepath.Join(flags, "go1"), filepath.Join(flags, "go2"), filepath.Join(flags, "out")

	env := homeEnv(as.Home)
	args, _ := jsonMarshalString(map[string]any{"method": "GET", "url": recvURL + "/own-call"})
	attackEnv := []string{"YETT_TEST_ROLE=inject", "YETT_TEST_GO1=" + go1, "YETT_TEST_GO2=" + go2, "YETT_TEST_OUT=" + out,
		agentRole + "=" + args, "YETT_TEST_AGENT_YETT=" + yett}
	script := `env ` + strings.Join(quoteAll(attackEnv), " ") + ` "` + attacker + `" -test.run='^$' & exec "` + yett + `" serve --approval-timeout 30s`
	serve := startPTYAs(t, as, env, "/bin/sh", "-c", script)
	serve.answer(t, "Yett vault passphrase: ", servePassphrase)
	serve.expect(t, "gateway listening")
	serve.expect(t, "legacy_tiocsti is 1") // serve says so at start

	r := runAgent(t, as, env, yett, map[string]any{"method": "GET", "url": recvURL + "/injected"}, func() {
		serve.expect(t, "answer:  y 1 ")
		os.WriteFile(go1, nil, 0o644)
		serve.expect(t, "No approved sessions.") // the injection is real
		serve.expect(t, "Type the card's code too: y 1 CODE")
		serve.expect(t, "[1] wrong code 3 times: denying it.")
	})
	if !strings.Contains(r.text, "DENIED") {
		t.Fatalf("the call whose card the injector tried to approve: %+v", r)
	}
	os.WriteFile(go2, nil, 0o644)
	serve.expect(t, "[2] refused:")
	serve.expect(t, "runs in yett serve's own terminal session")
	waitForFile(out)
	time.Sleep(100 * time.Millisecond)
	own, _ := os.ReadFile(out)
	if !strings.Contains(string(own), "DENIED") {
		t.Fatalf("the injector's own call through a setsid helper got %q", own)
	}
	if evs := readEvents(t, recvLog); len(evs) != 0 {
		t.Fatalf("the receiver saw %v; nothing may reach it", evs)
	}
}

func quoteAll(kv []string) []string {
	out := make([]string, len(kv))
	for i, s := range kv {
		out[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return out
}

func jsonMarshalString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
