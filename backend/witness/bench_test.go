//go:build unix

package witness

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

// requests are the add-checkpoint requests of one log growing one leaf at a
// time: from size i to i+1, made before the clock starts.
func requests(b *testing.B, l *testLog, n int) []AddCheckpoint {
	l.grow(int64(n))
	out := make([]AddCheckpoint, n)
	for i := range n {
		out[i] = l.request(int64(i), int64(i+1))
	}
	return out
}

// BenchmarkAddCheckpoint is the witness's add-checkpoint throughput, for
// one log and for 16 and 500 machines' logs at once, with the state in memory and
// in PostgreSQL (a real server on loopback, fsync off as in every test
// here, so the figure is the witness's work and the database's round
// trips, not a disk's), called directly and over HTTP on loopback. The
// baseline is one Ed25519 cosignature, made in the same run: the work a
// witness cannot skip.
func BenchmarkAddCheckpoint(b *testing.B) {
	key, err := NewKey("witness.bench/w1")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline-cosign-only", func(b *testing.B) {
		text := newTestLog(b, "example.com/log").grow(1).text(1)
		for b.Loop() {
			if _, err := note.Sign(&note.Note{Text: text}, key.signer); err != nil {
				b.Fatal(err)
			}
		}
	})
	var srv *pgtest.Server
	var dbs int
	top := b
	pgURL := func(b *testing.B) string {
		if srv == nil {
			srv = pgtest.Start(top) // one server for every sub-benchmark
		}
		dbs++
		return witnessDB(b, srv, fmt.Sprintf("bench%d", dbs))
	}
	stores := []struct {
		name string
		open func(b *testing.B) Store
	}{
		{"memory", func(*testing.B) Store { return NewMemStore() }},
		{"postgres", func(b *testing.B) Store { return openPG(b, pgURL(b)) }},
	}
	for _, st := range stores {
		b.Run(st.name+"/one-log/direct", func(b *testing.B) {
			l := newTestLog(b, "example.com/log")
			w := New(key, mustKnown(b, l.vkey), st.open(b), nil)
			reqs := requests(b, l, b.N)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if _, err := w.AddCheckpoint(ctx, reqs[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checkpoints/s")
		})
		for _, machines := range []int{16, 500} {
			b.Run(fmt.Sprintf("%s/%d-logs/http", st.name, machines), func(b *testing.B) {
				logs := make([]*testLog, machines)
				for i := range logs {
					logs[i] = newTestLog(b, fmt.Sprintf("example.com/machine%d", i))
				}
				w := startWitnessWithKey(b, key, st.open(b), logs...)
				per := b.N/machines + 1
				reqs := make([][]AddCheckpoint, machines)
				for i, l := range logs {
					reqs[i] = requests(b, l, per)
				}
				ctx := context.Background()
				b.ResetTimer()
				var wg sync.WaitGroup
				for i := range machines {
					wg.Go(func() {
						for _, r := range reqs[i] {
							if _, err := w.client.Cosign(ctx, r.Checkpoint, r.Proof); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(machines*per)/b.Elapsed().Seconds(), "checkpoints/s")
			})
		}
	}
}
