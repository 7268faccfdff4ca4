package vault

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// A removal takes effect at once (no call chooses the credential or reads
// its secret), and Restore within the window brings it back as it was,
// at the next version: the call that chose it before the removal stays
// refused, the next one gets the same secret. The restored record
// verifies after a reopen, and each step is announced.
func TestRemoveThenRestore(t *testing.T) {
	clock := newFakeClock()
	v, dir := newUnlocked(t, testOptions(clock))
	rec := &recorder{}
	v.Subscribe(rec.add)
	nc := sampleCredential("tracker", "CANARY-undo-4e1a")
	nc.PathPrefixes, nc.Approval, nc.RotateEveryDays = []string{"/v1/"}, ApprovalPerCall, 90
	added, err := v.Credentials().Add(nc)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	u := mustTarget(t, "https://api.example.com/v1/issues")
	chosen, err := v.Credentials().For(u) // a call waiting on its card
	if err != nil {
		t.Fatal(err)
	}

	if err := v.Credentials().Remove(added.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Credentials().For(u); !errors.Is(err, ErrNoCredential) {
		t.Fatalf("a call right after the removal chose: %v", err)
	}
	if s, err := v.Credentials().SecretOf(chosen.ID, chosen.Version); !errors.Is(err, ErrCredentialChanged) || s != nil {
		t.Fatalf("the waiting call read the removed secret: %v", err)
	}
	removed, err := v.Credentials().Removed()
	if err != nil || len(removed) != 1 || removed[0] != (RemovedCredential{ID: added.ID, Name: "tracker", Version: 1, UndoUntil: clock.Now().Add(UndoWindow)}) {
		t.Fatalf("removed %+v %v", removed, err)
	}

	clock.Advance(UndoWindow - time.Second)
	back, err := v.Credentials().Restore(added.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := added
	want.Version = 2
	if back.ID != want.ID || back.Name != want.Name || !slices.Equal(back.Hosts, want.Hosts) || !slices.Equal(back.PathPrefixes, want.PathPrefixes) ||
		back.Approval != want.Approval || back.RotateEveryDays != 90 || back.Version != 2 || !back.CreatedAt.Equal(want.CreatedAt) ||
		!back.UpdatedAt.Equal(want.UpdatedAt) || !back.SecretSetAt.Equal(want.SecretSetAt) || !back.RotationDueAt.Equal(want.RotationDueAt) {
		t.Fatalf("restored %+v, want %+v", back, want)
	}
	if s, err := v.Credentials().SecretOf(chosen.ID, chosen.Version); !errors.Is(err, ErrCredentialChanged) || s != nil {
		t.Fatalf("the call that chose it before the removal was revived by the undo: %v", err)
	}
	view, s, err := credentialAndSecret(v, u)
	if err != nil || view.Version != 2 || secretText(t, s) != "CANARY-undo-4e1a" {
		t.Fatalf("a call after the undo: %+v %v", view, err)
	}
	if _, err := v.Credentials().Restore(added.ID); !errors.Is(err, ErrUndoExpired) {
		t.Fatalf("a second undo: %v", err)
	}
	if r, _ := v.Credentials().Removed(); len(r) != 0 {
		t.Fatalf("still undoable after the undo: %+v", r)
	}
	var changes []Change
	for _, e := range rec.events {
		changes = append(changes, e.Change)
		if e.Credential == nil || e.Credential.ID != added.ID {
			t.Errorf("event %+v does not name the credential", e)
		}
	}
	if !slices.Equal(changes, []Change{ChangeCredentialAdded, ChangeCredentialRemoved, ChangeCredentialRestored}) ||
		rec.events[2].Credential.Version != 2 {
		t.Fatalf("events %+v", rec.events)
	}

	v.Close()
	v2 := openVault(t, dir, testOptions(clock))
	if err := v2.Unlock(pass(testPass)); err != nil {
		t.Fatalf("the restored record does not verify: %v", err)
	}
	view, s, err = credentialAndSecret(v2, u)
	if err != nil || view.Version != 2 || view.RotateEveryDays != 90 || secretText(t, s) != "CANARY-undo-4e1a" {
		t.Fatalf("after reopening: %+v %v", view, err)
	}
}

// The removal stands once the window has passed, once the vault locked
// (the keys the kept record needs went with the session), and after the
// process closed the vault; an id never removed is not restorable either.
func TestRemovalStands(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after func(t *testing.T, v *Vault, clock *fakeClock, dir string) *Vault
	}{
		{"window passed", func(t *testing.T, v *Vault, clock *fakeClock, _ string) *Vault {
			clock.Advance(UndoWindow)
			return v
		}},
		{"locked", func(t *testing.T, v *Vault, _ *fakeClock, _ string) *Vault {
			if err := v.Lock("user"); err != nil {
				t.Fatal(err)
			}
			if err := v.Unlock(pass(testPass)); err != nil {
				t.Fatal(err)
			}
			return v
		}},
		{"closed", func(t *testing.T, v *Vault, clock *fakeClock, dir string) *Vault {
			v.Close()
			v2 := openVault(t, dir, testOptions(clock))
			if err := v2.Unlock(pass(testPass)); err != nil {
				t.Fatal(err)
			}
			return v2
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			v, dir := newUnlocked(t, testOptions(clock))
			c, err := v.Credentials().Add(sampleCredential("gone", "CANARY-undo-gone"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Credentials().Restore(c.ID); !errors.Is(err, ErrUndoExpired) {
				t.Fatalf("restoring a credential that was never removed: %v", err)
			}
			if err := v.Credentials().Remove(c.ID); err != nil {
				t.Fatal(err)
			}
			v = tt.after(t, v, clock, dir)
			if _, err := v.Credentials().Restore(c.ID); !errors.Is(err, ErrUndoExpired) {
				t.Fatalf("restore: %v", err)
			}
			if r, err := v.Credentials().Removed(); err != nil || len(r) != 0 {
				t.Fatalf("removed %+v %v", r, err)
			}
			if l, _ := v.Credentials().List(); len(l) != 0 {
				t.Fatalf("the removed credential is back: %+v", l)
			}
		})
	}
}

// A locked vault undoes nothing, and says it is locked.
func TestRestoreWhileLocked(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	c, _ := v.Credentials().Add(sampleCredential("x", "CANARY-undo-locked"))
	if err := v.Credentials().Remove(c.ID); err != nil {
		t.Fatal(err)
	}
	v.Lock("user")
	if _, err := v.Credentials().Restore(c.ID); !errors.Is(err, ErrLocked) {
		t.Fatalf("restore while locked: %v", err)
	}
	if _, err := v.Credentials().Removed(); !errors.Is(err, ErrLocked) {
		t.Fatalf("removed while locked: %v", err)
	}
}
