package instance

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestSecondAcquireFocusesFirst(t *testing.T) {
	dir := t.TempDir()
	focused := make(chan struct{}, 1)
	p, err := Acquire(dir, "app", func() { focused <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()

	if _, err := Acquire(dir, "app", nil); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Acquire: %v, want ErrAlreadyRunning", err)
	}
	select {
	case <-focused:
	case <-time.After(5 * time.Second):
		t.Fatal("primary was not asked to focus")
	}
}

func TestReleaseLetsNextPrimaryIn(t *testing.T) {
	dir := t.TempDir()
	p, err := Acquire(dir, "app", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	p2, err := Acquire(dir, "app", nil)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	p2.Release()
}

// A primary killed with SIGKILL leaves its socket file behind; the kernel
// drops its lock, so the next launch becomes primary.
func TestKilledPrimaryDoesNotBlock(t *testing.T) {
	if os.Getenv("YETT_INSTANCE_CHILD") != "" {
		if _, err := Acquire(os.Getenv("YETT_INSTANCE_CHILD"), "app", nil); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledPrimaryDoesNotBlock$")
	cmd.Env = append(os.Environ(), "YETT_INSTANCE_CHILD="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("child not ready: %q %v", buf, err)
	}
	if _, err := Acquire(dir, "app", nil); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("while child runs: %v", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "app.sock")); err != nil {
		t.Fatalf("expected stale socket file: %v", err)
	}
	p, err := Acquire(dir, "app", nil)
	if err != nil {
		t.Fatalf("after kill: %v", err)
	}
	p.Release()
}

// `yett quit` asks the running instance to quit and waits until it has;
// with none running it says so. An instance that does not take quit
// requests refuses them.
func TestRequestQuit(t *testing.T) {
	dir := t.TempDir()
	if err := RequestQuit(dir, "app", time.Second); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("nothing running: %v", err)
	}
	p, err := Acquire(dir, "app", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := RequestQuit(dir, "app", time.Second); err == nil {
		t.Fatal("an instance without a quit handler quit")
	}
	quit := make(chan struct{})
	p.OnQuit(func() {
		p.Release()
		close(quit)
	})
	if err := RequestQuit(dir, "app", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-quit:
	default:
		t.Fatal("RequestQuit returned before the instance quit")
	}
}
