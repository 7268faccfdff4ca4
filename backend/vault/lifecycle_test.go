package vault

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestLifecycle(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	v := openVault(t, dir, testOptions(clock))
	if s := v.Status(); s.State != StateUninitialised || s.Epoch != 0 {
		t.Fatalf("new vault status %+v", s)
	}
	if err := v.Unlock(pass(testPass)); !errors.Is(err, ErrNotInitialised) {
		t.Fatalf("unlock before create: %v", err)
	}
	if err := v.Create(pass("short"), false); !errors.Is(err, ErrWeakPassphrase) {
		t.Fatalf("weak passphrase: %v", err)
	}
	rec := &recorder{}
	v.Subscribe(rec.add)
	p := pass(testPass)
	if err := v.Create(p, false); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p, make(Passphrase, len(p))) {
		t.Error("Create did not zero the passphrase")
	}
	if err := v.Create(pass(testPass), false); !errors.Is(err, ErrAlreadyInitialised) {
		t.Fatalf("second create: %v", err)
	}
	s := v.Status()
	if s.State != StateUnlocked || s.Epoch != 1 || s.KDF != testKDF.String() {
		t.Fatalf("after create %+v", s)
	}
	if !s.LockDeadline.Equal(clock.Now().Add(DefaultAutoLockAfter)) {
		t.Fatalf("deadline %v", s.LockDeadline)
	}
	if _, err := v.Credentials().Add(sampleCredential("GitHub", "CANARY-lifecycle")); err != nil {
		t.Fatal(err)
	}
	if err := v.Lock("test"); err != nil {
		t.Fatal(err)
	}
	if err := v.Lock("again"); err != nil {
		t.Fatal(err)
	}
	if s := v.Status(); s.State != StateLocked || s.Epoch != 2 || !s.LockDeadline.IsZero() {
		t.Fatalf("after lock %+v", s)
	}
	if _, err := v.Credentials().List(); !errors.Is(err, ErrLocked) {
		t.Fatalf("list while locked: %v", err)
	}
	if _, _, err := credentialAndSecret(v, apiRoot); !errors.Is(err, ErrLocked) {
		t.Fatalf("CredentialFor while locked: %v", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	list, err := v.Credentials().List()
	if err != nil || len(list) != 1 || list[0].Name != "GitHub" {
		t.Fatalf("list %v %v", list, err)
	}
	if got := v.Epoch(); got != 3 {
		t.Fatalf("epoch %d", got)
	}
	want := []EventKind{EventCreated, EventChanged, EventLocked, EventUnlocked}
	if !slices.Equal(rec.kinds(), want) {
		t.Fatalf("events %v, want %v (one per lock)", rec.kinds(), want)
	}
	v.Close()
	if err := v.Unlock(pass(testPass)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}

	// Reopen: same vault, locked, epoch kept (close locked it: 4).
	v2 := openVault(t, dir, testOptions(clock))
	if s := v2.Status(); s.State != StateLocked || s.Epoch != 4 {
		t.Fatalf("reopened %+v", s)
	}
	if err := v2.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if v2.Epoch() != 5 {
		t.Fatalf("epoch after reopen+unlock %d", v2.Epoch())
	}
}

func TestWrongPassphraseThrottles(t *testing.T) {
	clock := newFakeClock()
	v, dir := newUnlocked(t, testOptions(clock))
	v.Lock("test")
	epoch := v.Epoch()
	for i := 1; i <= freeAttempts; i++ {
		if err := v.Unlock(pass("wrong passphrase")); !errors.Is(err, ErrWrongPassphrase) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	var te *ThrottledError
	if err := v.Unlock(pass(testPass)); !errors.As(err, &te) || te.RetryAfter != time.Second {
		t.Fatalf("after %d failures: %v", freeAttempts, err)
	}
	if v.Status().RetryAfter != time.Second {
		t.Fatalf("status retry %v", v.Status().RetryAfter)
	}
	if v.Epoch() != epoch {
		t.Fatal("wrong passphrases changed the epoch")
	}
	clock.Advance(time.Second)
	if err := v.Unlock(pass("wrong again")); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatal(err)
	}
	// The counter survives a restart: the delay doubled to 2 s.
	v.Close()
	v = openVault(t, dir, testOptions(clock))
	if err := v.Unlock(pass(testPass)); !errors.As(err, &te) || te.RetryAfter != 2*time.Second || te.Failures != 4 {
		t.Fatalf("after restart: %v", err)
	}
	clock.Advance(2 * time.Second)
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	v.Lock("test")
	if err := v.Unlock(pass("wrong")); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatal(err)
	}
	if r := v.Status().RetryAfter; r != 0 {
		t.Fatalf("success did not reset the counter: retry %v", r)
	}
}

func TestWrongPassphraseChangesNothingButTheCounter(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	if _, err := v.Credentials().Add(sampleCredential("a", "CANARY-x")); err != nil {
		t.Fatal(err)
	}
	v.Close()
	before := dumpTables(t, dir)
	v = openVault(t, dir, testOptions(newFakeClock()))
	if err := v.Unlock(pass("not the passphrase")); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatal(err)
	}
	v.Close()
	after := dumpTables(t, dir)
	for _, table := range []string{"vault_meta", "vault_records", "vault_epoch", "schema_version"} {
		if before[table] != after[table] {
			t.Errorf("table %s changed after a wrong passphrase", table)
		}
	}
	if before["unlock_throttle"] == after["unlock_throttle"] {
		t.Error("the failure counter was not stored")
	}
}

func TestIdleAutoLock(t *testing.T) {
	clock := newFakeClock()
	v, dir := newUnlocked(t, testOptions(clock))
	rec := &recorder{}
	v.Subscribe(rec.add)
	clock.Advance(time.Hour)
	v.Touch()
	if d := v.Status().LockDeadline; !d.Equal(clock.Now().Add(DefaultAutoLockAfter)) {
		t.Fatalf("Touch did not move the deadline: %v", d)
	}
	if err := v.SetAutoLockAfter(time.Second); !errors.Is(err, ErrInvalid) {
		t.Fatalf("too short auto-lock accepted: %v", err)
	}
	if err := v.SetAutoLockAfter(15 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if s := v.Status(); s.AutoLockAfter != 15*time.Minute || !s.LockDeadline.Equal(clock.Now().Add(15*time.Minute)) {
		t.Fatalf("status %+v", s)
	}
	if !clock.fireLatest() {
		t.Fatal("no timer armed")
	}
	if s := v.Status(); s.State != StateLocked {
		t.Fatalf("idle timer did not lock: %v", s.State)
	}
	if e := rec.events[len(rec.events)-1]; e.Kind != EventLocked || e.Reason != "idle" {
		t.Fatalf("last event %+v", e)
	}
	// The setting is stored in the vault: a fresh process uses it once unlocked.
	v.Close()
	v = openVault(t, dir, testOptions(clock))
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if got := v.Status().AutoLockAfter; got != 15*time.Minute {
		t.Fatalf("stored auto-lock %v", got)
	}
}

func TestStaleIdleTimerDoesNothing(t *testing.T) {
	clock := newFakeClock()
	v, _ := newUnlocked(t, testOptions(clock))
	clock.mu.Lock()
	stale := clock.timers[0].f
	clock.mu.Unlock()
	v.Touch()
	stale()
	if v.Status().State != StateUnlocked {
		t.Fatal("a replaced timer locked the vault")
	}
}

func TestSubscriberMayCallVault(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	var seen []State
	cancel := v.Subscribe(func(e Event) {
		seen = append(seen, v.Status().State)
		if e.Kind == EventUnlocked {
			v.Lock("from subscriber")
		}
	})
	v.Lock("one")
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if v.Status().State != StateLocked {
		t.Fatal("subscriber's Lock did not happen")
	}
	if !slices.Equal(seen, []State{StateLocked, StateUnlocked, StateLocked}) {
		t.Fatalf("states seen %v", seen)
	}
	cancel()
	v.Unlock(pass(testPass))
	if len(seen) != 3 {
		t.Fatal("cancelled subscriber still called")
	}
}

// TestEpochNeverRepeatsAcrossRestarts runs open/unlock/lock/close cycles,
// some closing while unlocked, and checks that each lock and unlock gives
// an epoch above every earlier one, and that opening alone changes nothing.
func TestEpochNeverRepeatsAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	var seen []uint64
	observe := func(v *Vault) {
		t.Helper()
		e := v.Epoch()
		if len(seen) > 0 && e <= seen[len(seen)-1] {
			t.Fatalf("epoch %d after %v", e, seen)
		}
		seen = append(seen, e)
	}
	for i := 0; i < 8; i++ {
		v, err := Open(dir, testOptions(nil))
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && v.Epoch() != seen[len(seen)-1] {
			t.Fatalf("reopened at epoch %d, last was %d", v.Epoch(), seen[len(seen)-1])
		}
		if i == 0 {
			err = v.Create(pass(testPass), false)
		} else {
			err = v.Unlock(pass(testPass))
		}
		if err != nil {
			t.Fatal(err)
		}
		observe(v)
		if i%2 == 0 {
			err = v.Lock("cycle")
		} else {
			err = v.Close() // locks: closing while unlocked
		}
		if err != nil {
			t.Fatal(err)
		}
		observe(v)
		v.Close()
	}
}

// When the disk refuses the new epoch, Lock still locks (keys wiped), the
// epoch still moves in memory so nothing bound to the old one survives,
// and the failure is visible: the error wraps ErrEpochNotSaved and the
// event says EpochNotSaved. An unlock, which must commit its epoch, fails
// rather than announce one it could not save.
func TestLockWhenTheEpochCannotBeSaved(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(nil))
	var events []Event
	v.Subscribe(func(e Event) { events = append(events, e) })
	before := v.Epoch()
	sqlDB, err := v.db.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.Close() // every later statement fails
	err = v.Lock("test")
	if !errors.Is(err, ErrEpochNotSaved) {
		t.Fatalf("Lock: %v", err)
	}
	if v.Status().State != StateLocked {
		t.Fatalf("state %v after a lock whose epoch was not saved", v.Status().State)
	}
	if v.Epoch() <= before {
		t.Fatalf("epoch %d, was %d", v.Epoch(), before)
	}
	if len(events) != 1 || events[0].Kind != EventLocked || !events[0].EpochNotSaved || events[0].Epoch != v.Epoch() {
		t.Fatalf("events %+v", events)
	}
	if err := v.Unlock(pass(testPass)); err == nil {
		t.Fatal("unlocked without saving an epoch")
	}
}
