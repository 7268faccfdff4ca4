package witness

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
)

// A log that grows gets a cosignature at every size, each one valid for its
// checkpoint by the witness's key (checked with this package's verifier and
// with torchwood's), timestamped now, and the store follows.
func TestCosignAGrowingLog(t *testing.T) {
	l := newTestLog(t, "example.com/log")
	w := startWitness(t, NewMemStore(), l)
	seed := w.key.Seed()
	tw, err := torchwood.NewCosignatureSigner(w.key.Name(), ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	if tw.Verifier().String() != w.key.VerifierKey() {
		t.Fatalf("vkey %q, torchwood's %q", w.key.VerifierKey(), tw.Verifier().String())
	}
	old := int64(0)
	for _, n := range []int64{0, 1, 5, 5, 6, 17, 64, 65, 200} {
		l.grow(n)
		before := time.Now().Unix()
		cosigned, err := w.client.Cosign(context.Background(), l.checkpoint(n), l.proof(old, n))
		if err != nil {
			t.Fatalf("%d -> %d: %v", old, n, err)
		}
		after := time.Now().Unix()
		opened, err := note.Open(cosigned, note.VerifierList(tw.Verifier()))
		if err != nil {
			t.Fatalf("torchwood's verifier: %v", err)
		}
		ts, err := torchwood.CosignatureTimestamp(opened.Sigs[0])
		if err != nil || ts < before || ts > after {
			t.Fatalf("cosignature time %d (%v), want within [%d, %d]", ts, err, before, after)
		}
		c, err := torchwood.ParseCheckpoint(opened.Text)
		if err != nil || c.Tree != l.tree(n) || c.Origin != l.origin {
			t.Fatalf("cosigned checkpoint %+v (%v), want %+v", c, err, l.tree(n))
		}
		st, err := w.store.Latest(context.Background(), l.origin)
		if err != nil || st.Tree != l.tree(n) {
			t.Fatalf("store holds %+v (%v), want %+v", st.Tree, err, l.tree(n))
		}
		if _, err := note.Open(st.Checkpoint, note.VerifierList(tw.Verifier(), mustVerifier(t, l.vkey))); err != nil {
			t.Fatalf("stored checkpoint: %v", err)
		}
		old = n
	}
	// And the other way round: a cosignature torchwood makes verifies with
	// this package's verifier.
	signed, err := note.Sign(&note.Note{Text: "example.com/log\n3\n" + strings.Repeat("A", 43) + "=\n"}, tw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(signed, note.VerifierList(w.client.Witness)); err != nil {
		t.Fatalf("a torchwood cosignature: %v", err)
	}
}

// corruptSignature flips a bit of the last signature of a note, keeping its
// key name and ID.
func corruptSignature(t testing.TB, msg []byte) []byte {
	t.Helper()
	i := bytes.LastIndex(msg, []byte(" ")) + 1
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(msg[i:])))
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)-1] ^= 1
	return append(msg[:i:i], base64.StdEncoding.EncodeToString(sig)+"\n"...)
}

func mustVerifier(t testing.TB, vkey string) note.Verifier {
	t.Helper()
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// post sends a raw body to the witness and returns the status, content
// type and answer.
func post(t *testing.T, w *testWitness, body []byte) (int, string, string) {
	t.Helper()
	resp, err := w.srv.Client().Post(w.srv.URL+"/add-checkpoint", "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// Every answer tlog-witness defines, on the wire, for a log the witness has
// cosigned at size 20.
func TestProtocolAnswers(t *testing.T) {
	l := newTestLog(t, "example.com/log").grow(40)
	stranger := newTestLog(t, "example.com/other").grow(5)
	impostor := newTestLog(t, "example.com/log").grow(40) // same name, another key
	// The log's own key name and key ID over a signature that fails.
	badSig := corruptSignature(t, l.checkpoint(30))
	w := startWitness(t, NewMemStore(), l)
	if _, err := w.client.Cosign(context.Background(), l.checkpoint(20), l.proof(0, 20)); err != nil {
		t.Fatal(err)
	}
	forked := l.fork(10).grow(40)
	sameSizeOtherRoot := forked.checkpoint(20)
	emptyOtherRoot := l.sign("example.com/log\n0\n" + strings.Repeat("A", 43) + "=\n")
	wrongProof := l.proof(20, 30)
	wrongProof.Hashes[0][0] ^= 1
	tests := []struct {
		name   string
		body   []byte
		status int
		answer string
	}{
		{"unknown origin", stranger.request(0, 5).Marshal(), 404, ""},
		{"no trusted signature", impostor.request(20, 30).Marshal(), 403, ""},
		{"a failing signature by the log's key", AddCheckpoint{Proof: l.proof(20, 30), Checkpoint: badSig}.Marshal(), 403, ""},
		{"old size above the checkpoint's", AddCheckpoint{Proof: Proof{OldSize: 31}, Checkpoint: l.checkpoint(30)}.Marshal(), 400, ""},
		{"no empty line", []byte("old 20\n"), 400, ""},
		{"leading zero", bytes.Replace(l.request(20, 30).Marshal(), []byte("old 20"), []byte("old 020"), 1), 400, ""},
		{"old size not the witnessed one", l.request(10, 30).Marshal(), 409, "20\n"},
		{"old size zero", l.request(0, 30).Marshal(), 409, "20\n"},
		{"wrong proof", AddCheckpoint{Proof: wrongProof, Checkpoint: l.checkpoint(30)}.Marshal(), 422, ""},
		{"proof of another history", AddCheckpoint{Proof: forked.proof(20, 30), Checkpoint: forked.checkpoint(30)}.Marshal(), 422, ""},
		{"same size, other root", AddCheckpoint{Proof: Proof{OldSize: 20}, Checkpoint: sameSizeOtherRoot}.Marshal(), 422, ""},
		{"too large", bytes.Repeat([]byte("x"), MaxRequestSize+1), 413, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, ctype, answer := post(t, w, tc.body)
			if status != tc.status {
				t.Fatalf("status %d (%q), want %d", status, answer, tc.status)
			}
			if tc.status == 409 && (ctype != "text/x.tlog.size" || answer != tc.answer) {
				t.Fatalf("conflict answer %q as %q", answer, ctype)
			}
		})
	}
	// A fresh witness: an empty tree must have the empty tree's root, and
	// a proof from size 0 must be empty.
	fresh := startWitness(t, NewMemStore(), l)
	for name, body := range map[string][]byte{
		"empty tree, other root": AddCheckpoint{Checkpoint: emptyOtherRoot}.Marshal(),
		"proof from size 0":      AddCheckpoint{Proof: Proof{Hashes: wrongProof.Hashes[:1]}, Checkpoint: l.checkpoint(30)}.Marshal(),
	} {
		if status, _, answer := post(t, fresh, body); status != 422 {
			t.Errorf("%s: status %d (%q), want 422", name, status, answer)
		}
	}
	// None of it moved the witness.
	if st, _ := w.store.Latest(context.Background(), l.origin); st.Tree != l.tree(20) {
		t.Fatalf("witness moved to %+v", st.Tree)
	}
	if resp, err := w.srv.Client().Get(w.srv.URL + "/add-checkpoint"); err != nil || resp.StatusCode != 405 {
		t.Fatalf("GET: %v %v", resp.StatusCode, err)
	}
}

// The client turns each answer into the error a caller branches on.
func TestClientErrors(t *testing.T) {
	l := newTestLog(t, "example.com/log").grow(40)
	w := startWitness(t, NewMemStore(), l)
	ctx := context.Background()
	if _, err := w.client.Cosign(ctx, l.checkpoint(20), l.proof(0, 20)); err != nil {
		t.Fatal(err)
	}
	var conflict *ConflictError
	if _, err := w.client.Cosign(ctx, l.checkpoint(30), l.proof(0, 30)); !errors.As(err, &conflict) || conflict.Size != 20 {
		t.Fatalf("conflict: %v", err)
	}
	forked := l.fork(10).grow(40)
	if _, err := w.client.Cosign(ctx, forked.checkpoint(30), forked.proof(20, 30)); !errors.Is(err, ErrBadProof) {
		t.Fatalf("bad proof: %v", err)
	}
	stranger := newTestLog(t, "example.com/other").grow(5)
	if _, err := w.client.Cosign(ctx, stranger.checkpoint(5), stranger.proof(0, 5)); !errors.Is(err, ErrUnknownLog) {
		t.Fatalf("unknown log: %v", err)
	}
	// A witness that answers with another key's cosignature.
	other := startWitness(t, NewMemStore(), l)
	wrong := *other.client
	wrong.Witness = w.client.Witness
	if _, err := wrong.Cosign(ctx, l.checkpoint(20), l.proof(0, 20)); !errors.Is(err, ErrBadCosignature) {
		t.Fatalf("a cosignature by another key: %v", err)
	}
	w.srv.Close()
	if _, err := w.client.Cosign(ctx, l.checkpoint(30), l.proof(20, 30)); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("closed witness: %v", err)
	}
}

// A log whose history was cut or rewritten gets no cosignature, whatever
// old size it names, and the witness keeps each refusal as evidence.
func TestTruncatedAndRewrittenLogsAreRefused(t *testing.T) {
	l := newTestLog(t, "example.com/log").grow(20)
	store := NewMemStore()
	w := startWitness(t, store, l)
	ctx := context.Background()
	if _, err := w.client.Cosign(ctx, l.checkpoint(20), l.proof(0, 20)); err != nil {
		t.Fatal(err)
	}
	// Truncated to 12 entries and signed again: smaller than what was
	// witnessed, a conflict whatever old size it claims.
	cut := l.fork(12)
	var conflict *ConflictError
	if _, err := w.client.Cosign(ctx, cut.checkpoint(12), cut.proof(0, 12)); !errors.As(err, &conflict) || conflict.Size != 20 {
		t.Fatalf("truncated, old 0: %v", err)
	}
	if _, err := w.client.Cosign(ctx, cut.checkpoint(12), Proof{OldSize: 20}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("truncated, old 20: %v", err)
	}
	// Cut and grown past the witnessed size, or rewritten from entry 3:
	// the proof from 20 cannot hold.
	for name, fork := range map[string]*testLog{"cut and regrown": l.fork(12).grow(30), "rewritten": l.fork(3).grow(30)} {
		if _, err := w.client.Cosign(ctx, fork.checkpoint(30), fork.proof(20, 30)); !errors.Is(err, ErrBadProof) {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := w.client.Cosign(ctx, fork.checkpoint(20), Proof{OldSize: 20}); !errors.Is(err, ErrBadProof) {
			t.Fatalf("%s at the witnessed size: %v", name, err)
		}
	}
	got := store.Refusals()
	// The cut checkpoint was sent twice: one refusal.
	want := []RefusalReason{RefusedRollback, RefusedFork, RefusedFork, RefusedFork, RefusedFork}
	if len(got) != len(want) {
		t.Fatalf("%d refusals kept, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.Reason != want[i] || r.Origin != l.origin || r.Witnessed != l.tree(20) {
			t.Errorf("refusal %d: %+v", i, r)
		}
		if _, err := note.Open(r.Checkpoint, note.VerifierList(mustVerifier(t, l.vkey))); err != nil {
			t.Errorf("refusal %d keeps a checkpoint that does not verify: %v", i, err)
		}
	}
	// The honest log still goes on.
	l.grow(25)
	if _, err := w.client.Cosign(ctx, l.checkpoint(25), l.proof(20, 25)); err != nil {
		t.Fatal(err)
	}
}

// The spec's example request body parses and encodes back to the same bytes.
func TestSpecExampleRequest(t *testing.T) {
	body := "old 20852014\n" +
		"PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n" +
		"jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n" +
		"5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n" +
		"/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n" +
		"\n" +
		"example.com/behind-the-sofa\n" +
		"20852163\n" +
		"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n" +
		"\n" +
		"— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" +
		"— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n"
	r, err := ParseAddCheckpoint([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.OldSize != 20852014 || len(r.Hashes) != 4 {
		t.Fatalf("parsed %d, %d hashes", r.OldSize, len(r.Hashes))
	}
	if got := string(r.Marshal()); got != body {
		t.Fatalf("encoded back as\n%s", got)
	}
	c, err := torchwood.ParseCheckpoint(string(r.Checkpoint[:bytes.Index(r.Checkpoint, []byte("\n\n"))+1]))
	if err != nil || c.N != 20852163 {
		t.Fatalf("checkpoint %+v: %v", c, err)
	}
}

// Keys: a vkey round trips through NewVerifier; malformed ones are refused
// without being quoted; a key prints as REDACTED.
func TestKeys(t *testing.T) {
	k, err := NewKey("witness.test/w1")
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(k.VerifierKey())
	if err != nil || v.String() != k.VerifierKey() || v.Name() != "witness.test/w1" {
		t.Fatalf("verifier %v: %v", v, err)
	}
	seed := k.Seed()
	back, err := KeyFromSeed(k.Name(), seed)
	if err != nil || back.VerifierKey() != k.VerifierKey() {
		t.Fatalf("from seed: %v", err)
	}
	for _, s := range []string{"%v", "%s", "%+v", "%#v", "%x"} {
		if got := strings.TrimSpace(fmt.Sprintf(s, k)); got != "REDACTED" {
			t.Errorf("%s prints %q", s, got)
		}
	}
	vkey := k.VerifierKey()
	logKey := newTestLog(t, "example.com/log").vkey
	for name, bad := range map[string]string{
		"a log's Ed25519 key": logKey,
		"wrong key hash":      strings.Replace(vkey, "+", "+0", 1)[:len(vkey)],
		"uppercase hash":      strings.ToUpper(vkey[:strings.LastIndex(vkey, "+")]) + vkey[strings.LastIndex(vkey, "+"):],
		"no hash":             "witness.test/w1+" + vkey[strings.LastIndex(vkey, "+")+1:],
		"space in name":       "a b" + vkey[strings.Index(vkey, "+"):],
		"truncated key":       vkey[:len(vkey)-4],
		"empty":               "",
		"name only":           "witness.test/w1",
	} {
		if _, err := NewVerifier(bad); err != ErrBadKey {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := KeyFromSeed("a b", seed); !errors.Is(err, ErrBadKey) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := KeyFromSeed("w", seed[:31]); !errors.Is(err, ErrBadKey) {
		t.Errorf("short seed: %v", err)
	}
}

var _ http.Handler = (*Witness)(nil)
