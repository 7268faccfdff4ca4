package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

func TestCompactTreeMatchesTlog(t *testing.T) {
	var ct compactTree
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for n := int64(0); n < 300; n++ {
		want, err := tlog.TreeHash(n, reader)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			want = sha256.Sum256(nil)
		}
		if got := ct.root(); got != want {
			t.Fatalf("size %d: root %v, tlog says %v", n, got, want)
		}
		data := []byte{byte(n), byte(n >> 8)}
		hs, err := tlog.StoredHashes(n, data, reader)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, hs...)
		ct.push(tlog.RecordHash(data))
	}
}

func TestAppendVerifyRead(t *testing.T) {
	dir := writeLog(t, 10, 4)
	rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{})
	if rep.Status != StatusIntact || rep.Err != nil {
		t.Fatalf("verify: %v %v", rep.Status, rep.Err)
	}
	var got []Event
	for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Event)
	}
	if len(got) != 10 {
		t.Fatalf("read %d events, want 10", len(got))
	}
	for i, e := range got {
		if want := sampleEvent(i); !reflect.DeepEqual(e, want) {
			t.Errorf("event %d = %+v, want %+v", i, e, want)
		}
	}
	// Reopen and append more: indexes continue, log still verifies.
	l := openLog(t, dir, 4)
	idx, err := l.Append(context.Background(), sampleEvent(10))
	if err != nil {
		t.Fatal(err)
	}
	// A new writer starts a new segment: its key record comes first.
	if idx != rep.Entries+1 {
		t.Errorf("index after reopen %d, want %d", idx, rep.Entries+1)
	}
	l.Close()
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact {
		t.Fatalf("after reopen: %v", rep.Err)
	}
}

func TestOpenRefusals(t *testing.T) {
	dir := writeLog(t, 3, 4)
	opts := Options{Dir: dir, Recipient: identity(t).Recipient()}

	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(opts); !errors.Is(err, ErrLocked) {
		t.Errorf("second writer: %v", err)
	}
	l.Close()

	log := filepath.Join(dir, LogFile)
	orig := mustRead(t, log)
	bad := slices.Clone(orig)
	bad[40] ^= 1
	os.WriteFile(log, bad, 0o600)
	sync := opts
	sync.VerifyBeforeOpen = true
	if _, orep, err := Open(sync); !errors.Is(err, ErrTampered) || orep.Verify.FirstBad != 0 {
		t.Errorf("tampered log: %v (first bad %d)", err, orep.Verify.FirstBad)
	}
	if !bytes.Equal(mustRead(t, log), bad) {
		t.Error("Open modified a tampered log")
	}
	os.WriteFile(log, orig, 0o600)

	os.Rename(filepath.Join(dir, SigningKeyFile), filepath.Join(dir, "key.bak"))
	if _, _, err := Open(opts); !errors.Is(err, ErrNoSigningKey) {
		t.Errorf("missing signing key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, SigningKeyFile)); err == nil {
		t.Error("Open made a new signing key for an existing log")
	}
	os.Rename(filepath.Join(dir, "key.bak"), filepath.Join(dir, SigningKeyFile))
	if fi, err := os.Stat(filepath.Join(dir, SigningKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("signing key mode %v: %v", fi.Mode(), err)
	}
}

// Every file the log writes in its directory is private to the user: the
// log, its keys, the checkpoint, the tree state, a saved torn tail.
func TestFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit") // made by Open
	l, _, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := l.Append(context.Background(), Event{Type: EventGatewayStarted, Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	entries, _ := os.ReadDir(dir)
	if len(entries) < 4 {
		t.Fatalf("only %d files", len(entries))
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v", e.Name(), fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the directory is %v", fi.Mode().Perm())
	}
}

// Records do not wait unsigned for CheckpointEvery more to come: after
// CheckpointAfter the writer signs them on its own.
func TestQuietLogIsSignedAfterAWhile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, _, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient(), CheckpointAfter: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	idx, err := l.Append(context.Background(), Event{Type: EventGatewayStarted, Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
		if err == nil {
			if cp, err := ParseCheckpoint(b); err == nil && cp.Size > idx {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the record was never signed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
