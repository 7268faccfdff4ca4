package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

const canary = "CANARY-app-7f3e9a1c"

type recorder struct {
	mu     sync.Mutex
	events []string // JSON of each payload
}

func (r *recorder) emit(name string, data any) {
	b, _ := json.Marshal(data)
	r.mu.Lock()
	r.events = append(r.events, name+" "+string(b))
	r.mu.Unlock()
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n")
}

func newService(t *testing.T) (*VaultService, *recorder, *bytes.Buffer) {
	t.Helper()
	return serviceOver(t, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}, ThrottleBase: 50 * time.Millisecond})
}

// serviceOver is a VaultService over a new vault opened with opts, whose
// events and log the test reads.
func serviceOver(t *testing.T, opts vault.Options) (*VaultService, *recorder, *bytes.Buffer) {
	t.Helper()
	v, err := vault.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	sink := &eventSink{}
	sink.attach(rec.emit)
	var logs bytes.Buffer
	s := newVaultService(v, sink, slog.New(slog.NewTextHandler(&logs, nil)), false)
	t.Cleanup(func() { s.close(); v.Close() })
	return s, rec, &logs
}

func TestVaultServiceLifecycle(t *testing.T) {
	s, rec, logs := newService(t)
	if got := s.Status().State; got != "uninitialised" {
		t.Fatalf("state %q", got)
	}
	if _, err := s.Create("short", false); err == nil || !strings.Contains(err.Error(), "at least 12") {
		t.Fatalf("weak passphrase: %v", err)
	}
	st, err := s.Create("correct horse battery", false)
	if err != nil || st.State != "unlocked" {
		t.Fatalf("create: %+v %v", st, err)
	}
	if st.LockDeadline == "" || st.AutoLockMinutes != 8*60 {
		t.Fatalf("auto-lock not reported: %+v", st)
	}
	epoch := st.Epoch

	cred, err := s.AddCredential(NewCredentialForm{
		Name: "tracker", Secret: canary, Format: "bearer",
		Hosts: []string{"api.example.com"}, Approval: "session",
	})
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	if cred.ID == "" || cred.Format != "bearer" || len(cred.PathPrefixes) != 1 {
		t.Fatalf("view: %+v", cred)
	}

	st, _ = s.Lock()
	if st.State != "locked" || st.Epoch <= epoch {
		t.Fatalf("lock: %+v", st)
	}
	if _, err := s.ListCredentials(); err == nil || err.Error() != "Locked." {
		t.Fatalf("list while locked: %v", err)
	}
	if _, err := s.Unlock("wrong passphrase!"); err == nil || err.Error() != "Wrong passphrase." {
		t.Fatalf("wrong unlock: %v", err)
	}
	st, err = s.Unlock("correct horse battery")
	if err != nil {
		// the first failure may already throttle: wait it out once
		if !strings.Contains(err.Error(), "Try again in") {
			t.Fatalf("unlock: %v", err)
		}
		time.Sleep(time.Duration(s.Status().RetryAfterMs+10) * time.Millisecond)
		if st, err = s.Unlock("correct horse battery"); err != nil {
			t.Fatalf("unlock after wait: %v", err)
		}
	}
	list, err := s.ListCredentials()
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	js, _ := json.Marshal(list)
	for _, where := range []string{string(js), rec.all(), logs.String()} {
		if strings.Contains(where, canary) {
			t.Fatalf("canary leaked: %s", where)
		}
	}
	if !strings.Contains(rec.all(), `"state":"locked"`) || !strings.Contains(rec.all(), `"state":"unlocked"`) {
		t.Fatalf("status events missing:\n%s", rec.all())
	}
	if err := s.RemoveCredential(list[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveCredential(list[0].ID); err == nil || !strings.Contains(err.Error(), "No such credential") {
		t.Fatalf("remove twice: %v", err)
	}
}

func TestVaultServiceValidationMessages(t *testing.T) {
	s, _, _ := newService(t)
	if _, err := s.Create("correct horse battery", false); err != nil {
		t.Fatal(err)
	}
	_, err := s.AddCredential(NewCredentialForm{
		Name: "x", Secret: canary, Format: "header", HeaderName: "X-Key",
		Template: "no placeholder", Hosts: []string{"api.example.com"}, Approval: "session",
	})
	if err == nil || err.Error() != "Header template must contain {secret} exactly once." || strings.Contains(err.Error(), canary) {
		t.Fatalf("template error: %v", err)
	}
	if _, err := s.SetAutoLockMinutes(0); err == nil {
		t.Fatal("auto-lock 0 accepted")
	}
	st, err := s.SetAutoLockMinutes(15)
	if err != nil || st.AutoLockMinutes != 15 {
		t.Fatalf("auto-lock: %+v %v", st, err)
	}
}

func TestThrottleMessage(t *testing.T) {
	s, _, _ := newService(t)
	if _, err := s.Create("correct horse battery", false); err != nil {
		t.Fatal(err)
	}
	s.Lock()
	var last error
	for i := 0; i < 4; i++ {
		_, last = s.Unlock("nope nope nope")
	}
	if last == nil || !strings.Contains(last.Error(), "Too many wrong passphrases. Try again in") {
		t.Fatalf("throttle: %v", last)
	}
	if s.Status().RetryAfterMs <= 0 {
		t.Fatal("status does not report the throttle")
	}
}

func TestInternalErrorsAreGeneric(t *testing.T) {
	s, _, logs := newService(t)
	err := s.publicError(errTest("disk on fire at /secret/path"))
	if err.Error() != "Yett could not complete this. Details are in the Yett log." {
		t.Fatalf("got %q", err)
	}
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Fatal("internal error not logged")
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
