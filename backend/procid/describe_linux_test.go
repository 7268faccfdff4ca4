package procid

import (
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Describe names a real process: its start stamp, the program it runs
// (hashed from the running image) and who started it; a process that is
// gone is an error, not a description of whatever has its pid.
func TestDescribeNamesProcessAndLineage(t *testing.T) {
	sleep := exec.Command("/bin/sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	p, err := Describe(sleep.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(sleep.Process.Pid) + "/exe")
	body, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := readProc(os.Getpid())
	if p.PID != sleep.Process.Pid || p.ExePath != exe || p.ExeSHA256 != sha256.Sum256(body) || p.Name != "sleep" {
		t.Fatalf("Describe = pid %d, %s, %x, %q; want %d, %s, the file's hash, sleep", p.PID, p.ExePath, p.ExeSHA256, p.Name, sleep.Process.Pid, exe)
	}
	if len(p.Lineage) == 0 || p.Lineage[0] != (Stamp{PID: os.Getpid(), StartKey: info.startKey}) || !p.HasAncestor(os.Getpid()) {
		t.Fatalf("lineage %+v does not start with this test (pid %d)", p.Lineage, os.Getpid())
	}
	if p.HasAncestor(sleep.Process.Pid) {
		t.Fatal("a process is its own ancestor")
	}
	sleep.Process.Kill()
	sleep.Wait()
	if _, err := Describe(sleep.Process.Pid); !errors.Is(err, ErrProcessGone) {
		t.Fatalf("Describe of an exited process = %v, want ErrProcessGone", err)
	}
}
