package witness

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// testLog is a transparency log made by hand: leaves, their stored hashes,
// and a note key that signs its checkpoints. Two testLogs with the same key
// and different leaves are one log with two histories.
type testLog struct {
	t      testing.TB
	origin string
	signer note.Signer
	vkey   string
	stored []tlog.Hash
	n      int64
	salt   string // makes another history's leaves differ
}

func newTestLog(t testing.TB, origin string) *testLog {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{t: t, origin: origin, signer: s, vkey: vkey}
}

// fork returns a log with the same key and the first k leaves, whose later
// leaves will differ from l's.
func (l *testLog) fork(k int64) *testLog {
	f := &testLog{t: l.t, origin: l.origin, signer: l.signer, vkey: l.vkey, salt: l.salt + "/fork"}
	for i := range k {
		f.push(l.leaf(i))
	}
	return f
}

func (l *testLog) leaf(i int64) tlog.Hash {
	return tlog.RecordHash(fmt.Appendf(nil, "leaf %d%s", i, l.salt))
}

func (l *testLog) push(h tlog.Hash) {
	hs, err := tlog.StoredHashesForRecordHash(l.n, h, l)
	if err != nil {
		l.t.Fatal(err)
	}
	l.stored = append(l.stored, hs...)
	l.n++
}

// grow appends leaves until the log holds n.
func (l *testLog) grow(n int64) *testLog {
	for l.n < n {
		l.push(l.leaf(l.n))
	}
	return l
}

func (l *testLog) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = l.stored[x]
	}
	return out, nil
}

func (l *testLog) tree(n int64) tlog.Tree {
	if n == 0 {
		return tlog.Tree{N: 0, Hash: sha256.Sum256(nil)}
	}
	h, err := tlog.TreeHash(n, l)
	if err != nil {
		l.t.Fatal(err)
	}
	return tlog.Tree{N: n, Hash: h}
}

// checkpoint is the log's signed checkpoint of its first n leaves.
func (l *testLog) checkpoint(n int64) []byte { return l.sign(l.text(n)) }

// text is the checkpoint's text, unsigned.
func (l *testLog) text(n int64) string {
	t := l.tree(n)
	return fmt.Sprintf("%s\n%d\n%s\n", l.origin, n, base64.StdEncoding.EncodeToString(t.Hash[:]))
}

func (l *testLog) sign(text string) []byte {
	msg, err := note.Sign(&note.Note{Text: text}, l.signer)
	if err != nil {
		l.t.Fatal(err)
	}
	return msg
}

func (l *testLog) proof(old, n int64) Proof {
	if old == 0 || old == n {
		return Proof{OldSize: old}
	}
	p, err := tlog.ProveTree(n, old, l)
	if err != nil {
		l.t.Fatal(err)
	}
	return Proof{OldSize: old, Hashes: p}
}

// request is the add-checkpoint request from old to n.
func (l *testLog) request(old, n int64) AddCheckpoint {
	return AddCheckpoint{Proof: l.proof(old, n), Checkpoint: l.checkpoint(n)}
}

// testWitness is a witness on a real loopback HTTP server and a client
// that trusts its key.
type testWitness struct {
	*Witness
	key     *Key
	store   Store
	srv     *httptest.Server
	handler *swappable
	client  *Client
}

func startWitness(t testing.TB, store Store, logs ...*testLog) *testWitness {
	t.Helper()
	key, err := NewKey("witness.test/w1")
	if err != nil {
		t.Fatal(err)
	}
	return startWitnessWithKey(t, key, store, logs...)
}

func startWitnessWithKey(t testing.TB, key *Key, store Store, logs ...*testLog) *testWitness {
	t.Helper()
	var vkeys []string
	for _, l := range logs {
		vkeys = append(vkeys, l.vkey)
	}
	known, err := NewKnownLogs(vkeys...)
	if err != nil {
		t.Fatal(err)
	}
	w := New(key, known, store, nil)
	sw := &swappable{}
	sw.set(w)
	srv := httptest.NewServer(sw)
	t.Cleanup(srv.Close)
	v, err := NewVerifier(key.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	return &testWitness{Witness: w, key: key, store: store, srv: srv, handler: sw, client: &Client{URL: srv.URL, Witness: v, HTTP: srv.Client()}}
}

// swappable is a handler that can be replaced while the server runs (a
// witness that is down, then up).
type swappable struct{ h atomic.Pointer[http.Handler] }

func (s *swappable) set(h http.Handler) { s.h.Store(&h) }

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }
