package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// checkpointsOf writes n events to a new log, signing a checkpoint after
// each event listed in at, and returns the directory (the log still open)
// and every checkpoint the log announced, in order.
func checkpointsOf(t *testing.T, n int, at ...int) (string, *Log, []Checkpoint) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, 1<<20)
	t.Cleanup(func() { l.Close() })
	var cps []Checkpoint
	cancel := l.SubscribeCheckpoints(func(c Checkpoint) { cps = append(cps, c) })
	t.Cleanup(cancel)
	for i := range n {
		if _, err := l.Append(context.Background(), sampleEvent(i)); err != nil {
			t.Fatal(err)
		}
		for _, a := range at {
			if a == i {
				if _, err := l.Checkpoint(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return dir, l, cps
}

// Every pair of checkpoints gets a proof that tlog.CheckTree accepts, made
// from a kept edge and from none, and the edge it returns folds to the
// newer head.
func TestProveConsistencyBetweenEveryCheckpoint(t *testing.T) {
	dir, _, cps := checkpointsOf(t, 40, 0, 1, 2, 6, 7, 15, 16, 30, 39)
	if len(cps) != 9 {
		t.Fatalf("announced %d checkpoints, want 9", len(cps))
	}
	for i, old := range cps {
		_, edge, err := ProveConsistency(dir, Edge{}, 0, old)
		if err != nil {
			t.Fatal(err)
		}
		if edge.Head() != old.Head {
			t.Fatalf("edge %s, checkpoint %s", edge.Head(), old.Head)
		}
		kept, _ := edge.MarshalText()
		for _, to := range cps[i:] {
			for name, from := range map[string]Edge{"kept edge": edge, "no edge": {}} {
				p, next, err := ProveConsistency(dir, from, old.Size, to)
				if err != nil {
					t.Fatalf("%s: %s -> %s: %v", name, old.Head, to.Head, err)
				}
				if err := tlog.CheckTree(p, to.Size, to.Root, old.Size, old.Root); err != nil {
					t.Fatalf("%s: %s -> %s: %v", name, old.Head, to.Head, err)
				}
				if next.Head() != to.Head {
					t.Fatalf("%s: next edge %s, want %s", name, next.Head(), to.Head)
				}
				// The edge given is left as it was, for the next call.
				if now, _ := edge.MarshalText(); string(now) != string(kept) {
					t.Fatalf("%s: proving %s -> %s changed the edge given", name, old.Head, to.Head)
				}
			}
		}
	}
}

// A kept edge is a cache: a wrong one (another size's offset, a hash from
// elsewhere) costs a full read, never a wrong proof; it survives its text
// form.
func TestProveConsistencyDistrustsTheEdge(t *testing.T) {
	dir, _, cps := checkpointsOf(t, 20, 4, 9, 19)
	_, e4, err := ProveConsistency(dir, Edge{}, 0, cps[0])
	if err != nil {
		t.Fatal(err)
	}
	text, _ := e4.MarshalText()
	back, err := ParseEdge(text)
	if err != nil || back.Head() != e4.Head() {
		t.Fatalf("edge text round trip: %v, %s", err, back.Head())
	}
	bad := []Edge{back, back, back}
	bad[1].st.offset += 7
	bad[2].st.tree = bad[2].st.tree.clone()
	bad[2].st.tree.stack[0][0] ^= 1
	for i, from := range bad {
		p, _, err := ProveConsistency(dir, from, cps[0].Size, cps[2])
		if err != nil {
			t.Fatalf("edge %d: %v", i, err)
		}
		if err := tlog.CheckTree(p, cps[2].Size, cps[2].Root, cps[0].Size, cps[0].Root); err != nil {
			t.Fatalf("edge %d: %v", i, err)
		}
	}
}

// A checkpoint the log does not hold (cut short, or another log's tree)
// gets no proof.
func TestProveConsistencyRefusesAForeignTree(t *testing.T) {
	dir, l, cps := checkpointsOf(t, 10, 9)
	cp := cps[0]
	longer := cp
	longer.Size += 5
	other := cp
	other.Root[3] ^= 1
	for name, to := range map[string]Checkpoint{"longer": longer, "other root": other} {
		if _, _, err := ProveConsistency(dir, Edge{}, 2, to); !errors.Is(err, ErrNotInLog) {
			t.Errorf("%s: %v, want ErrNotInLog", name, err)
		}
	}
	l.Close()
	if err := os.Truncate(filepath.Join(dir, LogFile), 300); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ProveConsistency(dir, Edge{}, 2, cp); !errors.Is(err, ErrNotInLog) {
		t.Errorf("truncated log: %v, want ErrNotInLog", err)
	}
}

// BenchmarkProveConsistency: the proof a witness client sends after a
// checkpoint, for the last 4096 records of a log of benchEntries() 1 KiB
// records, from the edge kept at the last cosigned size (reading only those
// records) and, as the same-run baseline, from no edge (reading the whole
// log, as after a conflict).
func BenchmarkProveConsistency(b *testing.B) {
	dir, _ := makeBenchLog(b)
	f, err := os.Open(filepath.Join(dir, LogFile))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	id, err := ReadLogID(dir)
	if err != nil {
		b.Fatal(err)
	}
	n := benchEntries()
	old := max(n-4096, 1)
	st, err := edgeAt(f, id, old)
	if err != nil {
		b.Fatal(err)
	}
	end, err := edgeAt(f, id, n)
	if err != nil {
		b.Fatal(err)
	}
	to := Checkpoint{Head: Head{Size: n, Root: end.tree.root()}, LogID: id}
	for name, from := range map[string]Edge{"kept-edge": {st: st}, "no-edge": {}} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := ProveConsistency(dir, from, old, to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
