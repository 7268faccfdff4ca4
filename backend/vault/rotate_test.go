package vault

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func secretText(t *testing.T, s *Secret) string {
	t.Helper()
	defer s.Wipe()
	return string(s.Bytes())
}

// Rotation: a new version with the new secret, durable across a restart,
// announced with the credential it concerns; the old version is never
// opened again, so a call that chose the credential before the rotation is
// refused instead of sending the old secret.
func TestRotateSecret(t *testing.T) {
	clock := newFakeClock()
	v, dir := newUnlocked(t, testOptions(clock))
	rec := &recorder{}
	v.Subscribe(rec.add)
	added, err := v.Credentials().Add(sampleCredential("api", "CANARY-old-secret"))
	if err != nil {
		t.Fatal(err)
	}
	chosen, err := v.Credentials().For(apiRoot) // a call in flight chose version 1
	if err != nil || chosen.Version != 1 {
		t.Fatalf("chose %+v, %v", chosen, err)
	}

	clock.Advance(time.Hour)
	if _, err := v.Credentials().Rotate(added.ID, 1, NewSecret([]byte("CANARY-old-secret"))); !errors.Is(err, ErrInvalid) {
		t.Fatalf("rotating to the same secret: %v", err)
	}
	if _, err := v.Credentials().Rotate(added.ID, 7, NewSecret([]byte("CANARY-new-secret"))); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("rotating from a stale version: %v", err)
	}
	if _, err := v.Credentials().Rotate("cred_nope", 1, NewSecret([]byte("CANARY-new-secret"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rotating a missing credential: %v", err)
	}
	if _, err := v.Credentials().Rotate(added.ID, 1, NewSecret([]byte("CANARY-bad\nsecret"))); !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("rotating to an invalid secret: %v", err)
	}
	rotated, err := v.Credentials().Rotate(added.ID, 1, NewSecret([]byte("CANARY-new-secret")))
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Version != 2 || !rotated.SecretSetAt.Equal(clock.Now().UTC()) || !rotated.CreatedAt.Equal(added.CreatedAt) {
		t.Fatalf("rotated view %+v", rotated)
	}

	if _, err := v.Credentials().SecretOf(chosen.ID, chosen.Version); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("the call that chose version 1 read a secret: %v", err)
	}
	view, s, err := credentialAndSecret(v, apiRoot)
	if err != nil || view.Version != 2 || secretText(t, s) != "CANARY-new-secret" {
		t.Fatalf("next call: %+v %v", view, err)
	}

	var got *Event
	for _, e := range rec.events {
		if e.Change == ChangeSecretRotated {
			got = &e
		}
	}
	if got == nil || got.Credential == nil || *got.Credential != (CredentialRef{ID: added.ID, Name: "api", Version: 2}) {
		t.Fatalf("rotation event %+v", got)
	}
	for _, e := range rec.events {
		if strings.Contains(e.Reason, "CANARY") {
			t.Fatalf("an event carries the secret: %+v", e)
		}
	}

	// Durable: a new process on the file reads the new secret at version 2.
	v.Close()
	v2 := openVault(t, dir, testOptions(clock))
	if err := v2.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	view, s, err = credentialAndSecret(v2, apiRoot)
	if err != nil || view.Version != 2 || secretText(t, s) != "CANARY-new-secret" || !view.SecretSetAt.Equal(rotated.SecretSetAt) {
		t.Fatalf("after reopening: %+v %v", view, err)
	}
	if _, err := v2.Credentials().SecretOf(added.ID, 1); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("version 1 after reopening: %v", err)
	}
	v2.Lock("t")
	if _, err := v2.Credentials().Rotate(added.ID, 2, NewSecret([]byte("CANARY-x"))); !errors.Is(err, ErrLocked) {
		t.Fatalf("rotating while locked: %v", err)
	}
}

// Calls racing a rotation: every read that starts after RotateSecret
// returned gets the new secret (or is refused as changed); none gets the
// old one.
func TestRotationRacesCalls(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(nil))
	c, err := v.Credentials().Add(sampleCredential("api", "CANARY-before"))
	if err != nil {
		t.Fatal(err)
	}
	var rotated atomic.Bool
	var stale atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := rotated.Load()
				view, s, err := credentialAndSecret(v, apiRoot)
				if err != nil {
					if !errors.Is(err, ErrCredentialChanged) {
						t.Error(err)
						return
					}
					continue
				}
				if after && (view.Version == 1 || string(s.Bytes()) == "CANARY-before") {
					stale.Add(1)
				}
				s.Wipe()
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := v.Credentials().Rotate(c.ID, 1, NewSecret([]byte("CANARY-after"))); err != nil {
		t.Fatal(err)
	}
	rotated.Store(true)
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	if n := stale.Load(); n > 0 {
		t.Fatalf("%d reads after the rotation returned got the old secret", n)
	}
}

func TestUpdateCredential(t *testing.T) {
	clock := newFakeClock()
	v, dir := newUnlocked(t, testOptions(clock))
	rec := &recorder{}
	v.Subscribe(rec.add)
	c, err := v.Credentials().Add(sampleCredential("api", "CANARY-kept"))
	if err != nil {
		t.Fatal(err)
	}
	same := CredentialEdit{Name: "api", Injection: Injection{Format: InjectBearer}, Hosts: []string{"API.example.com"}, Approval: ApprovalSession}
	if got, err := v.Credentials().Update(c.ID, 1, same); err != nil || got.Version != 1 {
		t.Fatalf("an edit that changes nothing: %+v %v", got, err)
	}
	bad := same
	bad.Hosts = []string{"https://api.example.com"}
	if _, err := v.Credentials().Update(c.ID, 1, bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an invalid edit: %v", err)
	}
	clock.Advance(time.Minute)
	edit := CredentialEdit{
		Name:         "api (read only)",
		Injection:    Injection{Format: InjectHeader, HeaderName: "X-Api-Key", Template: "Key {secret}"},
		Hosts:        []string{"api.example.com", "*.example.org"},
		PathPrefixes: []string{"/v2/"},
		Approval:     ApprovalPerCall,
	}
	got, err := v.Credentials().Update(c.ID, 1, edit)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.Name != edit.Name || got.Injection != edit.Injection || got.Approval != ApprovalPerCall ||
		!got.UpdatedAt.Equal(clock.Now().UTC()) || !got.SecretSetAt.Equal(c.SecretSetAt) {
		t.Fatalf("edited view %+v", got)
	}
	if _, err := v.Credentials().Update(c.ID, 1, edit); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("an edit from a stale form: %v", err)
	}
	if _, err := v.Credentials().For(apiRoot); !errors.Is(err, ErrNoCredential) {
		t.Fatalf("the old path binding still matches: %v", err)
	}
	view, s, err := credentialAndSecret(v, mustTarget(t, "https://api.example.com/v2/x"))
	if err != nil || view.Version != 2 || secretText(t, s) != "CANARY-kept" {
		t.Fatalf("the edited credential: %+v %v", view, err)
	}
	if n := len(rec.events); n != 2 || rec.events[1].Change != ChangeCredentialEdited || rec.events[1].Credential.Version != 2 {
		t.Fatalf("events %+v", rec.events)
	}
	v.Close()
	v2 := openVault(t, dir, testOptions(clock))
	if err := v2.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	list, _ := v2.Credentials().List()
	if len(list) != 1 || list[0].Name != edit.Name || list[0].Version != 2 || list[0].PathPrefixes[0] != "/v2/" {
		t.Fatalf("after reopening: %+v", list)
	}
}
