package witness

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// barrierStore holds every Latest until n callers have read, so that n
// concurrent requests all check against the same state before any of them
// stores: the race tlog-witness warns of, made certain rather than likely.
type barrierStore struct {
	Store
	mu      sync.Mutex
	waiting int
	n       int
	release chan struct{}
}

func newBarrierStore(s Store, n int) *barrierStore {
	return &barrierStore{Store: s, n: n, release: make(chan struct{})}
}

func (b *barrierStore) Latest(ctx context.Context, origin string) (State, error) {
	st, err := b.Store.Latest(ctx, origin)
	b.mu.Lock()
	b.waiting++
	if b.waiting == b.n {
		close(b.release)
		b.waiting, b.release = 0, make(chan struct{})
		b.mu.Unlock()
		return st, err
	}
	release := b.release
	b.mu.Unlock()
	<-release
	return st, err
}

// testConcurrentAddCheckpoint sends n add-checkpoint requests for one log at
// once, each for another size and all from the size the witness holds,
// round after round: exactly one wins each round, every other one gets a
// conflict naming the winner's size, and the stored tree is the winner's.
func testConcurrentAddCheckpoint(t *testing.T, store Store) {
	const n, rounds = 8, 5
	l := newTestLog(t, "example.com/log").grow(1 + rounds*n)
	w := startWitness(t, newBarrierStore(store, n), l)
	ctx := context.Background()
	old := int64(0)
	for round := range rounds {
		sizes := make([]int64, n)
		results := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			sizes[i] = old + 1 + int64(i)
			wg.Go(func() {
				_, results[i] = w.client.Cosign(ctx, l.checkpoint(sizes[i]), l.proof(old, sizes[i]))
			})
		}
		wg.Wait()
		winner := int64(-1)
		for i, err := range results {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("round %d: sizes %d and %d both cosigned from %d", round, winner, sizes[i], old)
				}
				winner = sizes[i]
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no request won: %v", round, results)
		}
		for i, err := range results {
			var conflict *ConflictError
			if sizes[i] != winner && (!errors.As(err, &conflict) || conflict.Size != winner) {
				t.Fatalf("round %d: size %d got %v, want a conflict naming %d", round, sizes[i], err, winner)
			}
		}
		st, err := store.Latest(ctx, l.origin)
		if err != nil || st.Tree != l.tree(winner) {
			t.Fatalf("round %d: store holds %+v (%v), want size %d", round, st.Tree, err, winner)
		}
		old = winner
	}
}

func TestConcurrentAddCheckpointMemStore(t *testing.T) {
	testConcurrentAddCheckpoint(t, NewMemStore())
}

// testStoreContract holds a Store to what Witness relies on.
func testStoreContract(t *testing.T, s Store) {
	ctx := context.Background()
	origin := "example.com/contract"
	st, err := s.Latest(ctx, origin)
	if err != nil || st.Tree != (tlog.Tree{}) || st.Checkpoint != nil {
		t.Fatalf("unknown log: %+v, %v", st, err)
	}
	empty := tlog.Tree{N: 0, Hash: sha256.Sum256(nil)}
	if err := s.Advance(ctx, origin, tlog.Tree{}, State{Tree: empty, Checkpoint: []byte("cp0\n")}); err != nil {
		t.Fatal(err)
	}
	// A cosigned empty tree is not "never cosigned".
	var conflict *ConflictError
	if err := s.Advance(ctx, origin, tlog.Tree{}, State{Tree: empty}); !errors.As(err, &conflict) || conflict.Size != 0 {
		t.Fatalf("advance from none over a cosigned empty tree: %v", err)
	}
	t5 := tlog.Tree{N: 5, Hash: tlog.Hash{5}}
	if err := s.Advance(ctx, origin, empty, State{Tree: t5, Checkpoint: []byte("cp5\n")}); err != nil {
		t.Fatal(err)
	}
	// The old tree must match in size and root.
	for _, old := range []tlog.Tree{empty, {N: 5, Hash: tlog.Hash{6}}, {N: 4, Hash: tlog.Hash{5}}} {
		if err := s.Advance(ctx, origin, old, State{Tree: tlog.Tree{N: 9}}); !errors.As(err, &conflict) || conflict.Size != 5 {
			t.Fatalf("advance from %+v: %v", old, err)
		}
	}
	st, err = s.Latest(ctx, origin)
	if err != nil || st.Tree != t5 || string(st.Checkpoint) != "cp5\n" {
		t.Fatalf("latest: %+v, %q, %v", st.Tree, st.Checkpoint, err)
	}
	// Origins are apart.
	if st, _ := s.Latest(ctx, origin+"2"); st.Tree != (tlog.Tree{}) {
		t.Fatalf("another origin sees %+v", st.Tree)
	}
	// The same refusal twice (a replay) is kept once.
	for range 2 {
		if err := s.Refuse(ctx, Refusal{Origin: origin, Witnessed: t5, Tree: tlog.Tree{N: 3, Hash: tlog.Hash{3}}, Reason: RefusedRollback, Checkpoint: []byte("cp3\n")}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemStoreContract(t *testing.T) {
	s := NewMemStore()
	testStoreContract(t, s)
	if r := s.Refusals(); len(r) != 1 || r[0].Reason != RefusedRollback {
		t.Fatalf("refusals: %+v", r)
	}
}
