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
	if st := settledStatus(t, f.svc); st.State != "intact" {
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
	// status asks, lets the verification it may start finish, asks again.
	status := func() string {
		f.svc.Status()
		f.svc.verified.wait()
		return f.svc.Status().State
	}

	// An edit that keeps size and mtime is found once the result is a
	// minute old.
	flip(true)
	if st := status(); st != "intact" {
		t.Fatalf("self-check: the cached result was not used: %s", st)
	}
	now = now.Add(time.Minute)
	if st := status(); st != "tampered" {
		t.Fatalf("an edit hidden from the cache was not found after maxAge: %s", st)
	}

	// Any other edit is found as soon as a verification can run: the
	// status never waits for one, it shows the last result meanwhile.
	flip(true) // undo: intact again, re-verified after maxAge
	now = now.Add(time.Minute)
	if st := status(); st != "intact" {
		t.Fatalf("%s", st)
	}
	flip(false)
	os.Chtimes(logPath, fi.ModTime().Add(time.Second), fi.ModTime().Add(time.Second))
	now = now.Add(time.Second) // past the gap after the last verification
	if st := status(); st != "tampered" {
		t.Fatalf("an edit that changed mtime was served from the cache: %s", st)
	}
}

// After a change the next verification waits gapFactor times the last
// one's duration, so a log that grows all the time is not verified back to
// back; the result shown meanwhile is the last one.
func TestStatusVerificationIsRateLimited(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	c := verifyCache{maxAge: time.Hour, now: func() time.Time { return now }}
	os.WriteFile(filepath.Join(dir, audit.LogFile), nil, 0o600)
	if _, have := c.status(dir); have {
		t.Fatal("a result before any verification")
	}
	c.wait()
	rep, have := c.status(dir)
	if !have || rep.Status != audit.StatusIntact {
		t.Fatalf("%v %+v", have, rep)
	}
	c.mu.Lock()
	c.took = time.Second
	c.mu.Unlock()
	os.WriteFile(filepath.Join(dir, audit.LogFile), []byte("not a log, not torn"), 0o600)
	if rep, _ := c.status(dir); rep.Status != audit.StatusIntact {
		t.Fatal("the last result was not shown")
	}
	c.wait()
	if rep, _ := c.status(dir); rep.Status != audit.StatusIntact {
		t.Fatal("verified again within the gap")
	}
	now = now.Add(gapFactor * time.Second)
	c.status(dir)
	c.wait()
	if rep, _ := c.status(dir); rep.Status == audit.StatusIntact {
		t.Fatal("not verified again after the gap")
	}
}
