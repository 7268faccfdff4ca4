//go:build windows

package audit

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/yettdev/yett/internal/testsupport/wintest"
)

// TestLogOnWindows: on Windows a log is written, checkpointed and read
// back; while one writer holds it a second Open is ErrLocked, and the
// offline verifier still reads the held log (the lock leaves its content
// readable); once closed it verifies intact.
func TestLogOnWindows(t *testing.T) {
	dir := filepath.Join(wintest.TempDir(t), "audit")
	l := openLog(t, dir, 5)
	for i := range 12 {
		if _, err := l.Append(context.Background(), sampleEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()}); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second writer: %v, want ErrLocked", err)
	}
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Entries == 0 || rep.Status == StatusTampered {
		t.Fatalf("verifying the held log: %+v", rep)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact || rep.Entries == 0 {
		t.Fatalf("verify: %v (%d entries), %v", rep.Status, rep.Entries, rep.Err)
	}
	n := 0
	for _, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 12 {
		t.Fatalf("read back %d events, want 12", n)
	}
}
