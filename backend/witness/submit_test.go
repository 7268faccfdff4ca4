package witness

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
)

// machine is one Yett machine's audit log, a real one on disk.
type machine struct {
	t   *testing.T
	dir string
	id  *age.X25519Identity
	log *audit.Log
	n   int
}

func newMachine(t *testing.T) *machine {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	m := &machine{t: t, dir: filepath.Join(t.TempDir(), "audit"), id: id}
	m.open()
	t.Cleanup(func() { m.close() })
	return m
}

func (m *machine) open() {
	m.t.Helper()
	l, _, err := audit.Open(audit.Options{Dir: m.dir, Recipient: m.id.Recipient(), CheckpointAfter: -1})
	if err != nil {
		m.t.Fatal(err)
	}
	m.log = l
}

func (m *machine) close() {
	if m.log != nil {
		m.log.Close()
		m.log = nil
	}
}

// record appends k events and signs a checkpoint.
func (m *machine) record(k int) audit.Checkpoint {
	m.t.Helper()
	for range k {
		m.n++
		e := audit.Event{Type: audit.EventGatewayStarted, Time: time.Now().UTC(), BootID: "boot"}
		if _, err := m.log.Append(context.Background(), e); err != nil {
			m.t.Fatal(err)
		}
	}
	cp, err := m.log.Checkpoint()
	if err != nil {
		m.t.Fatal(err)
	}
	return cp
}

func (m *machine) vkey() string { return m.log.VerifierKey() }

// refusals counts the checkpoint_refused entries in the log.
func (m *machine) refusals() []audit.WitnessFacts {
	m.t.Helper()
	var out []audit.WitnessFacts
	for e, err := range audit.ReadEvents(filepath.Join(m.dir, audit.LogFile), m.id) {
		if err != nil {
			m.t.Fatal(err)
		}
		if e.Event.Type == audit.EventCheckpointRefused {
			out = append(out, *e.Event.Witness)
		}
	}
	return out
}

// copyDir copies a directory tree (a snapshot of a machine's files).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

func startWitnessFor(t *testing.T, store Store, vkeys ...string) *testWitness {
	t.Helper()
	key, err := NewKey("witness.test/team")
	if err != nil {
		t.Fatal(err)
	}
	known, err := NewKnownLogs(vkeys...)
	if err != nil {
		t.Fatal(err)
	}
	w := startWitnessWithKey(t, key, store)
	w.Witness = New(key, known, store, nil)
	w.handler.set(w.Witness)
	return w
}

// A machine's checkpoints are cosigned one after another; what it keeps is
// a held checkpoint that `audit verify` accepts, with the witness's
// cosignature valid for it, and the edge makes the next proof read only the
// new records.
func TestSubmitterCosignsEachCheckpoint(t *testing.T) {
	m := newMachine(t)
	w := startWitnessFor(t, NewMemStore(), m.vkey())
	var published [][]byte
	s := &Submitter{Dir: m.dir, Client: w.client, Log: m.log, Cosigned: func(b []byte) { published = append(published, b) }}
	ctx := context.Background()
	for _, k := range []int{1, 3, 0, 40, 2} {
		cp := m.record(k)
		out, err := s.Submit(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", m.n, err)
		}
		got, err := ParseCosigned(out)
		if err != nil || got.Head != cp.Head {
			t.Fatalf("cosigned %s (%v), want %s", got.Head, err, cp.Head)
		}
		cos, err := VerifyCosignatures(out, []*Verifier{w.client.Witness})
		if err != nil || len(cos) != 1 || cos[0].Witness != "witness.test/team" {
			t.Fatalf("cosignatures %v: %v", cos, err)
		}
		rep := audit.Verify(filepath.Join(m.dir, audit.LogFile), audit.VerifyOptions{Held: got.Text})
		if rep.Status != audit.StatusIntact || !rep.HeldOK {
			t.Fatalf("verify with the cosigned checkpoint: %s %v", rep.Status, rep.Err)
		}
	}
	// Submitting again with nothing new sends nothing and publishes nothing.
	before := len(published)
	if _, err := s.Submit(ctx); err != nil || len(published) != before {
		t.Fatalf("resubmit: %v, published %d -> %d", err, before, len(published))
	}
	if before != 5 || string(s.Latest()) != string(published[4]) {
		t.Fatalf("published %d checkpoints", before)
	}
	if r := m.refusals(); len(r) != 0 {
		t.Fatalf("refusals recorded: %+v", r)
	}
}

// A machine restored from an older copy (its log and its witness state cut
// back together) is refused: while it is smaller than what the witness
// cosigned (a conflict naming the larger size), and once it grew past it
// (the proof cannot hold). Each refusal is recorded once in its log, and
// the witness keeps them as evidence; a restart does not record the same
// refusal again.
func TestSubmitterRestoredMachineIsRefused(t *testing.T) {
	m := newMachine(t)
	store := NewMemStore()
	w := startWitnessFor(t, store, m.vkey())
	s := &Submitter{Dir: m.dir, Client: w.client, Log: m.log}
	ctx := context.Background()
	m.record(5)
	if _, err := s.Submit(ctx); err != nil {
		t.Fatal(err)
	}
	m.close()
	backup := filepath.Join(t.TempDir(), "backup")
	copyDir(t, m.dir, backup)
	m.open()
	m.record(30)
	s.Log = m.log
	if _, err := s.Submit(ctx); err != nil {
		t.Fatal(err)
	}
	// Restored: everything after the backup is gone, witness state too.
	m.close()
	if err := os.RemoveAll(m.dir); err != nil {
		t.Fatal(err)
	}
	copyDir(t, backup, m.dir)
	m.open()
	var told []audit.WitnessFacts
	refused := func(cp audit.Checkpoint, f audit.WitnessFacts) {
		if cp.Size != f.Size {
			t.Errorf("told the refusal of %d with the checkpoint of %d", f.Size, cp.Size)
		}
		told = append(told, f)
	}
	s = &Submitter{Dir: m.dir, Client: w.client, Log: m.log, Refused: refused}
	for range 2 {
		m.record(1)
		if _, err := s.Submit(ctx); !errors.Is(err, ErrRollback) {
			t.Fatalf("restored, smaller: %v", err)
		}
	}
	// Yett restarted (a new Submitter): the same refusal is not recorded
	// again (RefusedFile).
	s = &Submitter{Dir: m.dir, Client: w.client, Log: m.log, Refused: refused}
	m.record(1)
	if _, err := s.Submit(ctx); !errors.Is(err, ErrRollback) {
		t.Fatalf("restored, smaller, after a restart: %v", err)
	}
	for range 2 {
		m.record(40)
		if _, err := s.Submit(ctx); !errors.Is(err, ErrBadProof) {
			t.Fatalf("restored, grown past: %v", err)
		}
	}
	got := m.refusals()
	if len(got) != 2 || got[0].Reason != "rollback" || got[1].Reason != "fork" || got[0].Witness != "witness.test/team" {
		t.Fatalf("recorded refusals %+v, want one rollback then one fork", got)
	}
	if len(told) != 2 || told[0] != got[0] || told[1] != got[1] {
		t.Fatalf("Refused was told %+v, the log recorded %+v", told, got)
	}
	witnessed, _ := store.Latest(ctx, originOf(t, m.vkey()))
	if got[0].WitnessSize != witnessed.Tree.N || got[1].WitnessSize != witnessed.Tree.N {
		t.Fatalf("refusals name %d and %d, the witness holds %d", got[0].WitnessSize, got[1].WitnessSize, witnessed.Tree.N)
	}
	if r := store.Refusals(); len(r) < 3 || r[0].Reason != RefusedRollback || r[len(r)-1].Reason != RefusedFork {
		t.Fatalf("the witness kept %+v", r)
	}
}

// A log rewritten whole under the same key (same log ID, another history)
// is refused even by a submitter that starts with no state.
func TestSubmitterRewrittenLogIsRefused(t *testing.T) {
	m := newMachine(t)
	w := startWitnessFor(t, NewMemStore(), m.vkey())
	ctx := context.Background()
	m.record(20)
	if _, err := (&Submitter{Dir: m.dir, Client: w.client}).Submit(ctx); err != nil {
		t.Fatal(err)
	}
	m.close()
	// Keep the keys, throw away the history, write another.
	for _, f := range []string{audit.LogFile, audit.CheckpointFile, audit.TreeStateFile, "witnessed"} {
		if err := os.RemoveAll(filepath.Join(m.dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	m.open()
	m.record(30)
	s := &Submitter{Dir: m.dir, Client: w.client, Log: m.log}
	if _, err := s.Submit(ctx); !errors.Is(err, ErrBadProof) {
		t.Fatalf("rewritten: %v", err)
	}
	if got := m.refusals(); len(got) != 1 || got[0].Reason != "fork" {
		t.Fatalf("recorded %+v", got)
	}
}

// Run cosigns each checkpoint the log signs, and tries an unreachable
// witness again until it answers.
func TestSubmitterRunFollowsTheLog(t *testing.T) {
	m := newMachine(t)
	w := startWitnessFor(t, NewMemStore(), m.vkey())
	got := make(chan []byte, 16)
	s := &Submitter{Dir: m.dir, Client: w.client, Log: m.log, Retry: 10 * time.Millisecond,
		Cosigned: func(b []byte) { got <- b }}
	// The witness is down at first.
	refused := make(chan struct{}, 1)
	w.handler.set(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		select {
		case refused <- struct{}{}:
		default:
		}
		rw.WriteHeader(http.StatusServiceUnavailable)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, m.log); close(done) }()
	defer func() { cancel(); <-done }()
	cp := m.record(3)
	<-refused // tried while it was down
	w.handler.set(w.Witness)
	waitCosigned(t, got, cp)
	cp = m.record(7)
	waitCosigned(t, got, cp)
}

func waitCosigned(t *testing.T, got <-chan []byte, cp audit.Checkpoint) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case b := <-got:
			if c, err := ParseCosigned(b); err == nil && c.Head == cp.Head {
				return
			}
		case <-timeout:
			t.Fatalf("checkpoint %s not cosigned after 30 s", cp.Head)
		}
	}
}

func originOf(t *testing.T, vkey string) string {
	t.Helper()
	o, err := audit.Origin(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
