package witness

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"golang.org/x/mod/sumdb/note"

	"github.com/yettdev/yett/backend/audit"
)

// FuzzParseAddCheckpoint: a body that parses encodes back to the very same
// bytes (one encoding of every number and hash), within the bounds.
func FuzzParseAddCheckpoint(f *testing.F) {
	l := newTestLog(f, "example.com/log").grow(30)
	f.Add(l.request(0, 30).Marshal())
	f.Add(l.request(7, 30).Marshal())
	f.Add([]byte("old 0\n\nx"))
	f.Add([]byte("old 01\n\nx"))
	f.Add([]byte("old 5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\nx"))
	f.Add([]byte("old 5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\nx"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseAddCheckpoint(body)
		if err != nil {
			return
		}
		if r.OldSize < 0 || len(r.Hashes) > MaxProofLines || len(r.Checkpoint) == 0 {
			t.Fatalf("accepted %+v", r)
		}
		if got := r.Marshal(); !bytes.Equal(got, body) {
			t.Fatalf("parsed %q, encodes as %q", body, got)
		}
	})
}

// FuzzAddCheckpoint sends arbitrary bodies to a witness that has cosigned a
// log at size 20: no panic, and it cosigns only checkpoints signed by the
// log's key whose tree then is the one it stores.
func FuzzAddCheckpoint(f *testing.F) {
	l := newTestLog(f, "example.com/log").grow(40)
	f.Add(l.request(20, 30).Marshal())
	f.Add(l.request(20, 20).Marshal())
	f.Add(l.request(0, 30).Marshal())
	f.Add(l.fork(5).grow(30).request(20, 30).Marshal())
	f.Add(AddCheckpoint{Proof: l.proof(20, 40), Checkpoint: l.checkpoint(30)}.Marshal())
	logKey := mustVerifier(f, l.vkey)
	f.Fuzz(func(t *testing.T, body []byte) {
		key, _ := KeyFromSeed("witness.test/w1", make([]byte, SeedSize))
		known, _ := NewKnownLogs(l.vkey)
		store := NewMemStore()
		w := New(key, known, store, nil)
		ctx := context.Background()
		if _, err := w.AddCheckpoint(ctx, l.request(0, 20)); err != nil {
			t.Fatal(err)
		}
		r, err := ParseAddCheckpoint(body)
		if err != nil {
			return
		}
		cosig, err := w.AddCheckpoint(ctx, r)
		if err != nil {
			return
		}
		n, err := note.Open(r.Checkpoint, note.VerifierList(logKey))
		if err != nil {
			t.Fatalf("cosigned a checkpoint the log did not sign: %v", err)
		}
		st, _ := store.Latest(ctx, l.origin)
		if st.Tree.N < 20 {
			t.Fatalf("went back from 20 to %d", st.Tree.N)
		}
		if !bytes.HasPrefix(st.Checkpoint, []byte(n.Text)) || !bytes.HasSuffix(st.Checkpoint, cosig) {
			t.Fatalf("stored %q for a cosignature %q", st.Checkpoint, cosig)
		}
	})
}

// FuzzNewVerifier: a witness key that parses is one canonical vkey, and
// prints back as given.
func FuzzNewVerifier(f *testing.F) {
	k, _ := KeyFromSeed("witness.test/w1", make([]byte, SeedSize))
	f.Add(k.VerifierKey())
	f.Add(newTestLog(f, "example.com/log").vkey)
	f.Add("a+00000000+BA==")
	f.Fuzz(func(t *testing.T, vkey string) {
		v, err := NewVerifier(vkey)
		if err != nil {
			return
		}
		if v.String() != vkey || !validName(v.Name()) {
			t.Fatalf("parsed %q as %q", vkey, v.String())
		}
	})
}

// FuzzCosignatureAnswer feeds arbitrary answers to the client's check: it
// adds a cosignature only when the answer holds a valid one by the
// witness's key, and then exactly one line.
func FuzzCosignatureAnswer(f *testing.F) {
	l := newTestLog(f, "example.com/log").grow(10)
	key, _ := KeyFromSeed("witness.test/w1", make([]byte, SeedSize))
	v, _ := NewVerifier(key.VerifierKey())
	cp := l.checkpoint(10)
	w := New(key, mustKnown(f, l.vkey), NewMemStore(), nil)
	good, err := w.AddCheckpoint(context.Background(), l.request(0, 10))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(append(good, good...))
	f.Add([]byte("— witness.test/w1 AAAA\n"))
	f.Add([]byte("\n\n— x y\n"))
	c := &Client{Witness: v}
	f.Fuzz(func(t *testing.T, answer []byte) {
		out, err := c.addCosignature(cp, answer)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(out, cp) || bytes.Count(out[len(cp):], []byte("\n")) != 1 {
			t.Fatalf("answer %q made %q", answer, out)
		}
		if _, err := note.Open(out, note.VerifierList(v)); err != nil {
			t.Fatalf("added a cosignature that does not verify: %v", err)
		}
	})
}

func mustKnown(t testing.TB, vkeys ...string) KnownLogs {
	t.Helper()
	k, err := NewKnownLogs(vkeys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// FuzzCosigned feeds arbitrary files to what audit verify reads a cosigned
// checkpoint with: ParseCosigned finds a checkpoint only where the log's own
// key signed it, and VerifyCosignatures accepts only a valid cosignature by
// the witness's key.
func FuzzCosigned(f *testing.F) {
	id, _ := age.GenerateX25519Identity()
	dir := filepath.Join(f.TempDir(), "audit")
	l, _, err := audit.Open(audit.Options{Dir: dir, Recipient: id.Recipient(), CheckpointAfter: -1})
	if err != nil {
		f.Fatal(err)
	}
	l.Append(context.Background(), audit.Event{Type: audit.EventGatewayStarted, Time: time.Now().UTC()})
	cp, err := l.Checkpoint()
	l.Close()
	if err != nil {
		f.Fatal(err)
	}
	key, _ := KeyFromSeed("witness.test/w1", make([]byte, SeedSize))
	v, _ := NewVerifier(key.VerifierKey())
	w := New(key, mustKnown(f, cp.VerifierKey), NewMemStore(), nil)
	cosig, err := w.AddCheckpoint(context.Background(), AddCheckpoint{Checkpoint: cp.Text})
	if err != nil {
		f.Fatal(err)
	}
	cosigned := append(bytes.Clone(cp.Text), cosig...)
	f.Add(cosigned)
	f.Add(cp.Text)
	f.Add(append(bytes.Clone(cosigned), cosig...))
	f.Add([]byte("x\n\n— a b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, err := ParseCosigned(b); err == nil {
			own, err := note.NewVerifier(got.VerifierKey)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := note.Open(got.Text, note.VerifierList(own)); err != nil || !bytes.HasPrefix(b, got.Text[:bytes.Index(got.Text, []byte("\n\n"))]) {
				t.Fatalf("parsed a checkpoint its own key did not sign, or not from the file: %v", err)
			}
		}
		cos, err := VerifyCosignatures(b, []*Verifier{v})
		if err != nil {
			return
		}
		if len(cos) != 1 || cos[0].Witness != "witness.test/w1" {
			t.Fatalf("cosignatures %+v", cos)
		}
		if _, err := note.Open(b, note.VerifierList(v)); err != nil {
			t.Fatalf("accepted a cosignature that does not verify: %v", err)
		}
	})
}
