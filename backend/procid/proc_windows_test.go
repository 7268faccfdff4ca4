//go:build windows

package procid

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestHelperProcessWindows is the child the Windows tests start: it waits
// until it is killed.
func TestHelperProcessWindows(t *testing.T) {
	if os.Getenv("YETT_PROCID_CHILD") != "1" {
		return
	}
	time.Sleep(time.Minute)
	os.Exit(0)
}

// TestProcessIdentityOnWindows: the kernel's creation time, parent and
// image of a child process are read from its pid, WatchExit sees it end,
// and a process that is gone is ErrProcessGone.
func TestProcessIdentityOnWindows(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^TestHelperProcessWindows$")
	child.Env = append(os.Environ(), "YETT_PROCID_CHILD=1")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	info, err := readProc(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if info.ppid != os.Getpid() || info.startKey == 0 || time.Since(info.startTime) > time.Minute || time.Since(info.startTime) < 0 {
		t.Fatalf("child's identity: ppid %d (want %d), start key %d, started %v", info.ppid, os.Getpid(), info.startKey, info.startTime)
	}
	f, path, id, err := openExe(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !strings.EqualFold(path, exe) || id == (FileID{}) {
		t.Fatalf("image %q (file id %+v), want %q", path, id, exe)
	}
	if name := processName(child.Process.Pid); !strings.EqualFold(name, exeBase(exe)) {
		t.Errorf("process name %q, want %q", name, exeBase(exe))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := WatchExit(ctx, &RunRecord{PID: child.Process.Pid, StartKey: info.startKey})
	select {
	case <-done:
		t.Fatal("WatchExit fired while the child runs")
	case <-time.After(200 * time.Millisecond):
	}
	child.Process.Kill()
	child.Wait()
	<-done
	if ctx.Err() != nil {
		t.Fatal("WatchExit did not see the child exit")
	}
	if _, err := readProc(child.Process.Pid); !errors.Is(err, ErrProcessGone) {
		t.Fatalf("a process that exited: %v, want ErrProcessGone", err)
	}
	// Another creation time under the same pid is not the same process.
	select {
	case <-WatchExit(context.Background(), &RunRecord{PID: os.Getpid(), StartKey: 1}):
	case <-time.After(5 * time.Second):
		t.Fatal("a pid whose creation time differs is watched as the recorded process")
	}
}

func exeBase(p string) string { return p[strings.LastIndexAny(p, `\/`)+1:] }
