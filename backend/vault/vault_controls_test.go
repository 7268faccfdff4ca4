package vault

import (
	"errors"
	"testing"
)

// The sealed controls survive a lock and a reopen, are refused while
// locked, keep the auto-lock time (and it keeps them), and an altered
// settings record is damage, not a changed control.
func TestControlsAreSealed(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	if b, err := v.ControlsBlob(); err != nil || b != nil {
		t.Fatalf("before any: %q %v", b, err)
	}
	rec := &recorder{}
	v.Subscribe(rec.add)
	if err := v.SetControlsBlob([]byte(`{"verification":"every"}`), "verification: every card"); err != nil {
		t.Fatal(err)
	}
	if err := v.SetAutoLockAfter(DefaultAutoLockAfter / 2); err != nil {
		t.Fatal(err)
	}
	if k := rec.kinds(); len(k) != 2 || k[0] != EventChanged {
		t.Fatalf("events %v", k)
	}
	if err := v.SetControlsBlob([]byte(`not json`), "x"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("not JSON: %v", err)
	}
	v.Lock("t")
	if _, err := v.ControlsBlob(); !errors.Is(err, ErrLocked) {
		t.Fatalf("locked: %v", err)
	}
	v.Close()
	v2 := openVault(t, dir, testOptions(newFakeClock()))
	if err := v2.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if b, _ := v2.ControlsBlob(); string(b) != `{"verification":"every"}` {
		t.Fatalf("after reopen: %q", b)
	}
	if v2.Status().AutoLockAfter != DefaultAutoLockAfter/2 {
		t.Fatalf("auto-lock after reopen: %v", v2.Status().AutoLockAfter)
	}
	v2.Lock("t")
	v2.Close()
	tamper(t, dir, xorBytes("vault_records", "sealed", "id = ?", []int{40}, settingsID))
	expectDamaged(t, dir, "record settings (settings)")
}
