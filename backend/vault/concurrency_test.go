package vault

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentUse runs locks, unlocks, writes, reads and status calls
// from several goroutines (go test -race finds data races; a deadlock
// hangs the test). Subscribers call back into the vault, and the events
// they see carry non-decreasing epochs, strictly increasing across locks
// and unlocks.
func TestConcurrentUse(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	var mu sync.Mutex
	var lastAny, lastLockUnlock uint64
	v.Subscribe(func(e Event) {
		v.Status() // must not deadlock
		mu.Lock()
		defer mu.Unlock()
		if e.Epoch < lastAny {
			t.Errorf("event %+v after epoch %d", e, lastAny)
		}
		if e.Kind == EventLocked || e.Kind == EventUnlocked {
			if e.Epoch <= lastLockUnlock {
				t.Errorf("event %+v repeats epoch %d", e, lastLockUnlock)
			}
			lastLockUnlock = e.Epoch
		}
		lastAny = e.Epoch
	})
	var wg sync.WaitGroup
	run := func(n int, f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				f(i)
			}
		}()
	}
	okOrLocked := func(err error) {
		if err != nil && !errors.Is(err, ErrLocked) && !errors.Is(err, ErrNoCredential) && !errors.Is(err, ErrNotFound) {
			t.Errorf("unexpected error: %v", err)
		}
	}
	for g := 0; g < 2; g++ {
		run(15, func(i int) {
			okOrLocked(v.Lock("stress"))
			okOrLocked(v.Unlock(pass(testPass)))
		})
	}
	run(40, func(i int) {
		c, err := v.Credentials().Add(sampleCredential(fmt.Sprint("c", i), "CANARY-stress"))
		okOrLocked(err)
		if err == nil && i%3 == 0 {
			okOrLocked(v.Credentials().Remove(c.ID))
		}
	})
	run(60, func(i int) {
		v.Status()
		v.Touch()
		view, err := v.Credentials().For(apiRoot)
		if err != nil {
			if !errors.Is(err, ErrAmbiguousCredential) {
				okOrLocked(err)
			}
		} else {
			s, err := v.Credentials().SecretOf(view.ID, view.Version)
			switch {
			case errors.Is(err, ErrCredentialChanged):
				// The writer removed it between the choice and the
				// read: legitimate, but only if it really is gone (this
				// test edits nothing, so gone means removed).
				if views, lerr := v.Credentials().List(); lerr == nil {
					for _, c := range views {
						if c.ID == view.ID && c.Version == view.Version {
							t.Errorf("SecretOf(%s, %d): %v, yet the credential is listed at that version", view.ID, view.Version, err)
						}
					}
				}
			case err != nil:
				okOrLocked(err)
			default:
				s.Wipe()
			}
		}
		_, err = v.Credentials().List()
		okOrLocked(err)
	})
	wg.Wait()
	if s := v.Status(); s.State == StateDamaged {
		t.Fatalf("vault damaged under concurrent use: %s", s.Damaged)
	}
}

// Two processes on one vault file (the app and `yett serve`) each hold a
// Vault opened before the other unlocked: unlocking must see the other's
// epoch and manifest as they are now, not report the file as damaged.
func TestTwoOpenersUnlockInTurn(t *testing.T) {
	dir := t.TempDir()
	opts := Options{KDF: KDFParams{Time: 1, MemKiB: 64, Threads: 1}}
	a, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Create(pass("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 4 {
		for _, v := range []*Vault{a, b} {
			v.Lock("test")
			if err := v.Unlock(pass("correct horse battery")); err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
	}
	if a.Status().State != StateUnlocked || b.Status().State != StateUnlocked {
		t.Fatal("a vault is not unlocked")
	}
}
