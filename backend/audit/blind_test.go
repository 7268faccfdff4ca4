package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"filippo.io/age"
)

// The writer is given only the public recipient (as the gateway gets it while
// the vault is locked); the identity reads the entries afterwards.
func TestBlindWrite(t *testing.T) {
	pub := identity(t).Recipient().String() // all the gateway holds
	rcpt, err := age.ParseX25519Recipient(pub)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "audit")
	l, _, err := Open(Options{Dir: dir, Recipient: rcpt})
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Type: EventVaultLocked, Time: t0, VaultEpoch: 18},
		{Type: EventActionDenied, Time: t0, Reason: ReasonVaultLocked, SessionID: "R31",
			Action: &Action{RequestID: "locked-3d4a", Channel: "http", Operation: "post_event", Target: "127.0.0.1:8787"}},
	}
	for _, e := range want {
		if _, err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	// Nothing the writer holds can decrypt: no field of Log is an identity.
	idType := reflect.TypeOf((*age.Identity)(nil)).Elem()
	lt := reflect.TypeOf(Log{})
	for i := range lt.NumField() {
		if f := lt.Field(i); f.Type.Implements(idType) || reflect.PointerTo(f.Type).Implements(idType) {
			t.Errorf("Log.%s can hold an identity", f.Name)
		}
	}
	other, _ := age.GenerateX25519Identity()
	for _, err := range ReadEvents(filepath.Join(dir, LogFile), other) {
		var noMatch *age.NoIdentityMatchError
		if !errors.As(err, &noMatch) {
			t.Fatalf("another identity: %v", err)
		}
		break
	}
	var got []Event
	for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Event)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v", got)
	}
}

// Concurrent appends and checkpoints: every acknowledged index is unique,
// holds exactly the event its appender wrote, and the log verifies.
func TestConcurrentAppendAndCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, 5)
	var mu sync.Mutex
	acked := map[int64]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				e := sampleEvent(1)
				e.SessionID = fmt.Sprintf("w%d-%d", w, i)
				idx, err := l.Append(context.Background(), e)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if _, dup := acked[idx]; dup {
					t.Errorf("index %d acknowledged twice", idx)
				}
				acked[idx] = e.SessionID
				mu.Unlock()
				if i%10 == 0 {
					if _, err := l.Checkpoint(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact {
		t.Fatal(rep.Err)
	}
	n := 0
	for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if acked[e.Index] != e.Event.SessionID {
			t.Fatalf("index %d holds %q, its appender wrote %q", e.Index, e.Event.SessionID, acked[e.Index])
		}
		n++
	}
	if n != 200 {
		t.Fatalf("%d events, want 200", n)
	}
}

// Verify and Export while a writer appends and checkpoints at full speed:
// every run must see a consistent log (no false stale or truncated reports).
func TestVerifyWhileWriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, 2)
	if _, err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := l.Append(context.Background(), sampleEvent(i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 60 {
		if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact {
			close(stop)
			<-done
			t.Fatalf("verify during writes: %v: %v", rep.Status, rep.Err)
		}
		if _, _, err := Export(dir, io.Discard); err != nil {
			close(stop)
			<-done
			t.Fatalf("export during writes: %v", err)
		}
	}
	close(stop)
	<-done
	l.Close()
}
