package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

func TestStatusCacheNeverHidesAnEditForLong(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	f.vault.Lock("user")
	now := time.Now()
	f.svc.verified = verifyCache{maxAge: time.Minute, now: func() time.Time { return now }}
	if st := f.svc.Status(); st.State != "intact" {
		t.Fatalf("%+v", st)
	}
	logPath := filepath.Join(f.dir, "audit", audit.LogFile)
	fi, _ := os.Stat(logPath)
	flip := func(keepMtime bool) {
		t.Helper()
		b, _ := os.ReadFile(logPath)
		b[len(b)/2] ^= 1
		if err := os.WriteFile(logPath, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if keepMtime {
			os.Chtimes(logPath, fi.ModTime(), fi.ModTime())
		}
	}

	// An edit that keeps size and mtime is found once the result is a
	// minute old.
	flip(true)
	if st := f.svc.Status(); st.State != "intact" {
		t.Fatalf("self-check: the cached result was not used: %+v", st)
	}
	now = now.Add(time.Minute)
	if st := f.svc.Status(); st.State != "tampered" {
		t.Fatalf("an edit hidden from the cache was not found after maxAge: %+v", st)
	}

	// Any other edit is found at once.
	flip(true) // undo: intact again, re-verified after maxAge
	now = now.Add(time.Minute)
	if st := f.svc.Status(); st.State != "intact" {
		t.Fatalf("%+v", st)
	}
	flip(false)
	os.Chtimes(logPath, fi.ModTime().Add(time.Second), fi.ModTime().Add(time.Second))
	if st := f.svc.Status(); st.State != "tampered" {
		t.Fatalf("an edit that changed mtime was served from the cache: %+v", st)
	}
}
