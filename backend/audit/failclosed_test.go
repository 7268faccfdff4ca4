//go:build linux

package audit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// failingFile fails writes or syncs on demand. A failing write first writes
// half its bytes, as a full disk does.
type failingFile struct {
	f                   logFile
	failWrite, failSync bool
}

var errInjected = errors.New("injected I/O failure")

func (f *failingFile) Write(b []byte) (int, error) {
	if f.failWrite {
		n, _ := f.f.Write(b[:len(b)/2])
		return n, errInjected
	}
	return f.f.Write(b)
}

func (f *failingFile) Sync() error {
	if f.failSync {
		return errInjected
	}
	return f.f.Sync()
}

func TestFailClosedInjected(t *testing.T) {
	for _, tc := range []struct {
		name                string
		failWrite, failSync bool
	}{
		{"write", true, false},
		{"fsync", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "audit")
			ff := &failingFile{}
			l, _, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient(),
				wrap: func(f logFile) logFile { ff.f = f; return ff }})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			good, err := l.Append(ctx, sampleEvent(0))
			if err != nil {
				t.Fatal(err)
			}
			ff.failWrite, ff.failSync = tc.failWrite, tc.failSync
			if idx, err := l.Append(ctx, sampleEvent(1)); !errors.Is(err, ErrBroken) || !errors.Is(err, errInjected) || idx != -1 {
				t.Fatalf("append on failing %s = %d, %v", tc.name, idx, err)
			}
			// Healthy again, but the log must not write after the gap.
			ff.failWrite, ff.failSync = false, false
			if _, err := l.Append(ctx, sampleEvent(2)); !errors.Is(err, ErrBroken) {
				t.Fatalf("append after failure: %v", err)
			}
			if _, err := l.Checkpoint(); !errors.Is(err, ErrBroken) {
				t.Fatalf("checkpoint after failure: %v", err)
			}
			l.Close()
			// Reopening repairs (a half record is saved aside) and the
			// acknowledged entry is there.
			l = openLog(t, dir, 0)
			l.Close()
			rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{})
			if rep.Status != StatusIntact {
				t.Fatalf("verify: %v", rep.Err)
			}
			found := false
			for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
				if err != nil {
					t.Fatal(err)
				}
				found = found || e.Index == good
				if e.Event.Time.Equal(sampleEvent(2).Time) {
					t.Fatal("the append refused after the failure is in the log")
				}
			}
			if !found {
				t.Fatal("acknowledged entry lost")
			}
		})
	}
}

// mount runs mount(8); the test fails (not skips) where it is not allowed:
// CI runs these as root.
func mount(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
		t.Fatalf("mount %v: %v: %s (these tests need root and mount(8))", args, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", args[len(args)-1]).Run() })
}

func TestFailClosedDiskFull(t *testing.T) {
	dir := t.TempDir()
	mount(t, "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir)
	l := openLog(t, filepath.Join(dir, "audit"), 16)
	ctx := context.Background()
	var acked []int64
	var err error
	for i := 0; i < 10000; i++ {
		var idx int64
		if idx, err = l.Append(ctx, sampleEvent(i)); err != nil {
			break
		}
		acked = append(acked, idx)
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	if _, err := l.Append(ctx, sampleEvent(0)); !errors.Is(err, ErrBroken) {
		t.Fatalf("append after ENOSPC: %v", err)
	}
	l.Close()
	rep := Verify(filepath.Join(dir, "audit", LogFile), VerifyOptions{})
	if rep.Status != StatusIntact {
		t.Fatalf("verify after disk full: %v", rep.Err)
	}
	n := 0
	for e, err := range ReadEvents(filepath.Join(dir, "audit", LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if n < len(acked) && e.Index == acked[n] {
			n++
		}
	}
	if n != len(acked) {
		t.Fatalf("%d of %d acknowledged entries readable", n, len(acked))
	}
}

func TestFailClosedReadOnlyDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "audit")
	l := openLog(t, dir, 0)
	if _, err := l.Append(context.Background(), sampleEvent(0)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	before := mustRead(t, filepath.Join(dir, LogFile))
	// chmod does not stop root; a read-only bind mount does.
	mount(t, "--bind", "-o", "ro", dir, dir)
	_, _, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
	if !errors.Is(err, syscall.EROFS) {
		t.Fatalf("open on read-only dir: %v", err)
	}
	fresh := filepath.Join(dir, "sub")
	if _, _, err := Open(Options{Dir: fresh, Recipient: identity(t).Recipient()}); err == nil {
		t.Fatal("open created a log in a read-only directory")
	}
	if after := mustRead(t, filepath.Join(dir, LogFile)); string(after) != string(before) {
		t.Fatal("log changed")
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Fatal("directory created on a read-only mount")
	}
}
