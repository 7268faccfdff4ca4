package vault

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestResetKeepsOldFileAndEpochGoesOn(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	if _, err := v.Credentials().Add(sampleCredential("x", "CANARY-reset")); err != nil {
		t.Fatal(err)
	}
	v.Close()
	path := filepath.Join(dir, FileName)
	// Damage the file so the vault opens damaged, as a person would find it.
	b, _ := os.ReadFile(path)
	damaged := bytes.Clone(b[:len(b)/2])
	os.WriteFile(path, damaged, 0o600)

	v = openVault(t, dir, testOptions(newFakeClock()))
	if v.Status().State != StateDamaged {
		t.Fatalf("state %v", v.Status().State)
	}
	rec := &recorder{}
	v.Subscribe(rec.add)
	if err := v.Reset(); err != nil {
		t.Fatal(err)
	}
	s := v.Status()
	// The damaged file's epoch was unreadable: the new one starts from the clock.
	if s.State != StateUninitialised || s.Damaged != "" || s.Epoch <= uint64(newFakeClock().Now().Unix()) {
		t.Fatalf("after reset %+v", s)
	}
	if k := rec.kinds(); len(k) != 1 || k[0] != EventReset {
		t.Fatalf("events %v", k)
	}
	aside, _ := filepath.Glob(path + ".reset-*")
	if len(aside) != 1 {
		t.Fatalf("old file not kept: %v", aside)
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, damaged) {
		t.Fatal("the old file was changed")
	}
	if err := v.Create(pass(testPass), false); err != nil {
		t.Fatal(err)
	}
	if l, _ := v.Credentials().List(); len(l) != 0 {
		t.Fatalf("new vault has %d credentials", len(l))
	}

	// From a healthy unlocked vault, the epoch continues above the old one.
	before := v.Epoch()
	if err := v.Reset(); err != nil {
		t.Fatal(err)
	}
	if v.Epoch() <= before {
		t.Fatalf("epoch after reset %d, before %d", v.Epoch(), before)
	}
}
