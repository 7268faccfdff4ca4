package filelock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/yettdev/yett/internal/testsupport/wintest"
)

// TestLockIsExclusiveAndKeepsTheFileReadable: a second open file cannot
// take the lock while the first holds it, can once it is released or
// closed, and reads the locked file's content meanwhile.
func TestLockIsExclusiveAndKeepsTheFileReadable(t *testing.T) {
	path := filepath.Join(wintest.TempDir(t), "log")
	if err := os.WriteFile(path, []byte("records"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("a second open file took the held lock: %v %v", ok, err)
	}
	buf := make([]byte, 7)
	if _, err := b.ReadAt(buf, 0); err != nil || string(buf) != "records" {
		t.Fatalf("the locked file is not readable: %q %v", buf, err)
	}
	Unlock(a)
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("after unlock: %v %v", ok, err)
	}
	b.Close()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("after the holder closed: %v %v", ok, err)
	}
}
