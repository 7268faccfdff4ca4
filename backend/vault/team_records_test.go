package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const teamCanary = "CANARY-team-5d0c7e19-never-leak"

func sampleTeam(name string) TeamRecord {
	pw, key := NewSecret([]byte(teamCanary+"-password")), NewSecret([]byte(teamCanary+"-signing-key"))
	return TeamRecord{Name: name, Meta: json.RawMessage(`{"host":"db.example.com","role":"yett_t_m1"}`),
		Secrets: map[string]*Secret{"password": &pw, "signing_key": &key}}
}

// A team membership is put, read back authenticated after a lock and an
// unlock, replaced (a new version, announced as such) and removed; while
// locked nothing reads it.
func TestTeamRecordLifecycle(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	rec := &recorder{}
	v.Subscribe(rec.add)
	if _, err := v.Team().Open(); !errors.Is(err, ErrNoTeam) {
		t.Fatalf("before any team: %v", err)
	}
	if err := v.Team().Put(sampleTeam("platform"), ChangeTeamJoined); err != nil {
		t.Fatal(err)
	}
	if err := v.Lock("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Team().Open(); !errors.Is(err, ErrLocked) {
		t.Fatalf("read while locked: %v", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	got, err := v.Team().Open()
	if err != nil || got.Name != "platform" || string(got.Secrets["password"].Bytes()) != teamCanary+"-password" ||
		!strings.Contains(string(got.Meta), "yett_t_m1") {
		t.Fatalf("after unlock: %v", err)
	}
	got.WipeSecrets()
	next := sampleTeam("platform")
	pw := NewSecret([]byte("rotated-password"))
	next.Secrets["password"] = &pw
	if err := v.Team().Put(next, ChangeTeamUpdated); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.Team().Open(); string(got.Secrets["password"].Bytes()) != "rotated-password" {
		t.Fatal("the update was not kept")
	}
	if err := v.Team().Remove("platform"); err != nil {
		t.Fatal(err)
	}
	if has, err := v.Team().Has(); has || err != nil {
		t.Fatalf("after remove: %v %v", has, err)
	}
	var changes []Change
	for _, e := range recordedEvents(rec) {
		if e.Kind == EventChanged {
			changes = append(changes, e.Change)
			if e.Credential == nil || e.Credential.Name != "platform" {
				t.Errorf("event %s names %+v", e.Change, e.Credential)
			}
		}
	}
	if fmt.Sprint(changes) != "[team_joined team_updated team_left]" {
		t.Fatalf("changes announced: %v", changes)
	}
}

// What a team record refuses, and that no error quotes a secret.
func TestTeamRecordValidation(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	empty := NewSecret(nil)
	big := NewSecret(bytes.Repeat([]byte("x"), maxTeamSecret+1))
	for name, edit := range map[string]func(*TeamRecord){
		"no name":         func(r *TeamRecord) { r.Name = "" },
		"control in name": func(r *TeamRecord) { r.Name = "a\nb" },
		"meta not JSON":   func(r *TeamRecord) { r.Meta = json.RawMessage(`{` + teamCanary) },
		"meta too large":  func(r *TeamRecord) { r.Meta = json.RawMessage(`"` + strings.Repeat("x", maxTeamMeta) + `"`) },
		"empty secret":    func(r *TeamRecord) { r.Secrets["x"] = &empty },
		"huge secret":     func(r *TeamRecord) { r.Secrets["x"] = &big },
		"spaced name":     func(r *TeamRecord) { s := NewSecret([]byte("v")); r.Secrets["a b"] = &s },
	} {
		r := sampleTeam("ok")
		edit(&r)
		err := v.Team().Put(r, ChangeTeamJoined)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		} else if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: the error quotes a secret", name)
		}
	}
}

// The record's secrets and its address are in no file in the clear, and a
// record altered in the file is damage at the next unlock.
func TestTeamRecordSealedAndTamper(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	if err := v.Team().Put(sampleTeam("platform"), ChangeTeamJoined); err != nil {
		t.Fatal(err)
	}
	v.Lock("t")
	v.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("CANARY-team")) || bytes.Contains(b, []byte("db.example.com")) {
			t.Errorf("%s holds the team record in the clear", filepath.Base(f))
		}
	}
	tamper(t, dir, xorBytes("vault_records", "sealed", "id = ?", []int{32}, teamRecordID))
	v2 := openVault(t, dir, testOptions(newFakeClock()))
	if err := v2.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) {
		t.Fatalf("unlock of an altered team record: %v", err)
	}
}

func recordedEvents(r *recorder) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}
