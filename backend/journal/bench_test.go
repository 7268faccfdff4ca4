package journal

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDispatchFinish is the journal's share of one call: its dispatch
// record and its result, from 16 concurrent callers (group commit), with
// the fsyncs of a real file. It reports the log's fsyncs per call.
func BenchmarkDispatchFinish(b *testing.B) {
	j, err := Open(filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	ctx := context.Background()
	var n atomic.Int64
	before := j.Syncs()
	b.SetParallelism(8) // 16 callers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			id := fmt.Sprintf("q-%d", i)
			if _, err := j.Dispatch(ctx, intent(id, fmt.Sprintf("k-%d", i), "B1")); err != nil {
				b.Error(err)
				return
			}
			if err := j.Finish(ctx, id, Result{Status: 200, Class: "success"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(j.Syncs()-before)/float64(b.N), "fsyncs/call")
}

// BenchmarkFold is what moving one final call from the log to the database
// costs (off the call's path, but CPU all the same): batches of 512, the
// calls of about a second at 16 agents.
func BenchmarkFold(b *testing.B) {
	j, err := OpenWith(filepath.Join(b.TempDir(), FileName), Options{FoldEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	const batch = 512
	entries := make([]Entry, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for k := range entries {
			id := fmt.Sprintf("q-%d-%d", i, k)
			entries[k] = Entry{Intent: intent(id, "k-"+id, "B1"), State: StateResult, Result: Result{Status: 200, Class: "success"}}
		}
		if err := j.archive(entries); err != nil {
			b.Fatal(err)
		}
	}
}
