package procid

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestExecSameBinaryNoLongerMatches is issue 9, item 7: the agent
// re-executes its own file with other arguments (as `exec node other.js`
// or `exec python3 other.py` would). Pid, start time and executable file
// stay; the run is another program all the same.
func TestExecSameBinaryNoLongerMatches(t *testing.T) {
	f := newFixture(t)
	a := f.startAgent(t)
	in := NewInspector()
	rec, err := in.Identify(a.conn)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := in.Matches(rec); err != nil {
		t.Fatalf("fresh record does not match: %v", err)
	}
	if _, err := a.stdin.Write([]byte("exec-self\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "agent to re-execute itself", func() bool {
		b, _ := os.ReadFile("/proc/" + itoa(rec.PID) + "/cmdline")
		return strings.Contains(string(b), "--now-another-program")
	})
	if err := in.Matches(rec); !errors.Is(err, ErrCmdLineChanged) {
		t.Fatalf("Matches after an exec of the same file with other arguments = %v, want ErrCmdLineChanged", err)
	}
}

// TestExecSameShellNoLongerMatches: /bin/sh execs /bin/sh with another
// script, the way a shell agent hands over to another program.
func TestExecSameShellNoLongerMatches(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `sleep 60 <&- & echo $!; read go; exec /bin/sh -c 'echo execd; read x' other-program`)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	var child int
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if child > 0 {
			(&os.Process{Pid: child}).Kill()
		}
	})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, _ = strconv.Atoi(strings.TrimSpace(line))
	eventually(t, "the child to run sleep", func() bool {
		exe, _ := os.Readlink("/proc/" + itoa(child) + "/exe")
		return strings.HasSuffix(exe, "/sleep")
	})
	in := NewInspector()
	rec, err := in.Origin(child)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if rec.PID != cmd.Process.Pid {
		t.Fatalf("origin %d, want the shell %d", rec.PID, cmd.Process.Pid)
	}
	if err := in.Matches(rec); err != nil {
		t.Fatalf("fresh record does not match: %v", err)
	}
	stdin.Write([]byte("go\n"))
	if l, err := out.ReadString('\n'); err != nil || l != "execd\n" {
		t.Fatalf("shell did not exec: %q %v", l, err)
	}
	if err := in.Matches(rec); !errors.Is(err, ErrCmdLineChanged) {
		t.Fatalf("Matches after the shell exec'd itself with another program = %v, want ErrCmdLineChanged", err)
	}
}
