package vault

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const witnessCanary = "CANARY-witness-2b7f41c0-never-leak"

func sampleWitness(name string) WitnessRecord {
	return WitnessRecord{Name: name, Seed: NewSecret(bytes.Repeat([]byte{0xA5}, witnessSeedLen)),
		Database: NewSecret([]byte("postgres://witness:" + witnessCanary + "@db.example.com/team"))}
}

// A witness record is put, read back authenticated after a lock and an
// unlock, replaced and removed, each change announced with the witness's
// name; while locked nothing reads it.
func TestWitnessRecordLifecycle(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	rec := &recorder{}
	v.Subscribe(rec.add)
	if _, err := v.WitnessKey().Open(); !errors.Is(err, ErrNoWitness) {
		t.Fatalf("before any witness: %v", err)
	}
	if err := v.WitnessKey().Put(sampleWitness("witness.example/w1")); err != nil {
		t.Fatal(err)
	}
	v.Lock("t")
	if _, err := v.WitnessKey().Open(); !errors.Is(err, ErrLocked) {
		t.Fatalf("read while locked: %v", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	got, err := v.WitnessKey().Open()
	if err != nil || got.Name != "witness.example/w1" || !bytes.Contains(got.Database.Bytes(), []byte(witnessCanary)) ||
		!bytes.Equal(got.Seed.Bytes(), bytes.Repeat([]byte{0xA5}, witnessSeedLen)) {
		t.Fatalf("after unlock: %v", err)
	}
	got.Wipe()
	if err := v.WitnessKey().Put(sampleWitness("witness.example/w2")); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.WitnessKey().Open(); got.Name != "witness.example/w2" {
		t.Fatalf("the replacement was not kept: %q", got.Name)
	}
	if err := v.WitnessKey().Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.WitnessKey().Open(); !errors.Is(err, ErrNoWitness) {
		t.Fatalf("after remove: %v", err)
	}
	var changes []string
	rec.mu.Lock()
	for _, e := range rec.events {
		if e.Kind == EventChanged {
			changes = append(changes, fmt.Sprintf("%s %s", e.Change, e.Credential.Name))
		}
	}
	rec.mu.Unlock()
	if got := strings.Join(changes, ", "); got != "witness_set witness.example/w1, witness_set witness.example/w2, witness_removed witness.example/w2" {
		t.Fatalf("changes announced: %s", got)
	}
}

// What a witness record refuses, without quoting a secret; the seed and the
// database address are in no file in the clear; an altered record is damage
// at the next unlock.
func TestWitnessRecordSealed(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	for name, edit := range map[string]func(*WitnessRecord){
		"no name":        func(r *WitnessRecord) { r.Name = "" },
		"space in name":  func(r *WitnessRecord) { r.Name = "a b" },
		"plus in name":   func(r *WitnessRecord) { r.Name = "a+b" },
		"short seed":     func(r *WitnessRecord) { r.Seed = NewSecret(make([]byte, 31)) },
		"no database":    func(r *WitnessRecord) { r.Database = NewSecret(nil) },
		"huge database":  func(r *WitnessRecord) { r.Database = NewSecret(bytes.Repeat([]byte(witnessCanary), 200)) },
		"invalid UTF-8 ": func(r *WitnessRecord) { r.Name = "w\xff" },
	} {
		r := sampleWitness("w")
		edit(&r)
		err := v.WitnessKey().Put(r)
		if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := v.WitnessKey().Put(sampleWitness("witness.example/w1")); err != nil {
		t.Fatal(err)
	}
	v.Lock("t")
	v.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(witnessCanary)) || bytes.Contains(b, bytes.Repeat([]byte{0xA5}, witnessSeedLen)) {
			t.Errorf("%s holds the witness record in the clear", filepath.Base(f))
		}
	}
	tamper(t, dir, xorBytes("vault_records", "sealed", "id = ?", []int{32}, witnessRecordID))
	v2 := openVault(t, dir, testOptions(newFakeClock()))
	if err := v2.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) {
		t.Fatalf("unlock of an altered witness record: %v", err)
	}
}
