//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/internal/testsupport/nonroot"
	"github.com/yettdev/yett/internal/testsupport/ptytest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// ptyRun is a program running with a pseudo-terminal as its controlling
// terminal and standard input, as when a person runs it in a terminal
// window: what it writes to the terminal is collected, and the test types
// at it.
type ptyRun struct {
	cmd    *exec.Cmd
	master *os.File
	screen syncbuf.Buffer // the terminal: echo, prompts, and stdout
	pos    int            // expect searches from here
	done   chan struct{}
}

// homeEnv is a person's environment in home: their data and runtime
// directories, and nothing of the test runner's Yett.
func homeEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "YETT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "HISTFILE=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "YETT_DATA_DIR="+home+"/data", "YETT_RUNTIME_DIR="+home+"/run")
}

// startPTY runs name args on a fresh pty in a session of its own; stdin,
// stdout and stderr are the terminal, as in a terminal window.
func startPTY(t *testing.T, env []string, name string, args ...string) *ptyRun {
	return startPTYAs(t, nil, env, name, args...)
}

// startPTYAs is startPTY for a person (nil: the test runner): the terminal
// is theirs, as a terminal emulator or sshd gives a user a pty they own.
func startPTYAs(t *testing.T, as *nonroot.User, env []string, name string, args ...string) *ptyRun {
	t.Helper()
	master, slave := ptytest.Open(t)
	r := &ptyRun{cmd: exec.Command(name, args...), master: master, done: make(chan struct{})}
	r.cmd.Env = env
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = slave, slave, slave
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if as != nil {
		if err := os.Chown(slave.Name(), as.UID, as.GID); err != nil && os.Getuid() == 0 {
			t.Fatal(err)
		}
		r.cmd.Dir = as.Home
		as.Run(r.cmd)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Only the program holds the terminal now: reading it ends when the
	// program (and whatever it started) is gone.
	slave.Close()
	go func() { io.Copy(&r.screen, master); close(r.done) }()
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	return r
}

// startPTYWithStdin runs yett args with a pty as its controlling terminal,
// output and error, but stdin from in: a program feeding it while a
// terminal is there.
func startPTYWithStdin(t *testing.T, env []string, in io.Reader, args ...string) *ptyRun {
	t.Helper()
	master, slave := ptytest.Open(t)
	r := &ptyRun{cmd: exec.Command(yettBin, args...), master: master, done: make(chan struct{})}
	r.cmd.Env = env
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = in, slave, slave
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	go func() { io.Copy(&r.screen, master); close(r.done) }()
	return r
}

// expect waits for s to appear after what an earlier expect matched.
func (r *ptyRun) expect(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := r.screen.String()
		if i := strings.Index(out[r.pos:], s); i >= 0 {
			r.pos += i + len(s)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q; it shows:\n%s", s, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answer waits for prompt, then types line.
func (r *ptyRun) answer(t *testing.T, prompt, line string) {
	t.Helper()
	r.expect(t, prompt)
	if _, err := r.master.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the program to exit and returns its exit code, once the
// terminal has been drained.
func (r *ptyRun) wait(t *testing.T) int {
	t.Helper()
	exited := make(chan struct{})
	go func() { r.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(90 * time.Second):
		r.cmd.Process.Kill()
		t.Fatalf("%s did not exit; the terminal shows:\n%s", r.cmd.Path, r.screen.String())
	}
	select {
	case <-r.done:
	case <-time.After(2 * time.Second):
	}
	return r.cmd.ProcessState.ExitCode()
}

// agentResult is what a test agent's one call returned.
type agentResult struct {
	text string
	err  error
}

// runAgent runs the test agent as the person (nil: the runner) with env,
// calls answer once its card can be answered, and returns the call's text.
func runAgent(t *testing.T, as *nonroot.User, env []string, yett string, args map[string]any, answer func()) agentResult {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if as != nil {
		self = as.Install(t, self, "agent")
	}
	raw, _ := json.Marshal(args)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(append([]string(nil), env...), agentRole+"="+string(raw), "YETT_TEST_AGENT_YETT="+yett)
	var out, errOut syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if as != nil {
		cmd.Dir = as.Home
		as.Run(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	answer()
	select {
	case err := <-done:
		if err != nil {
			return agentResult{text: out.String(), err: fmt.Errorf("%v: %s", err, errOut.String())}
		}
		return agentResult{text: out.String()}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return agentResult{err: fmt.Errorf("the agent did not finish: %s", errOut.String())}
	}
}

// approveCard waits for yett serve's card n on the terminal and types the
// line that approves it, with its one-time code.
func (r *ptyRun) approveCard(t *testing.T, n int) {
	t.Helper()
	r.expect(t, fmt.Sprintf("answer:  y %d ", n))
	code := cardCode(r.screen.String(), n)
	if _, err := r.master.Write([]byte(fmt.Sprintf("y %d %s\n", n, code))); err != nil {
		t.Fatal(err)
	}
}
