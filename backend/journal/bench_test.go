package journal

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
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
