package activity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
)

// benchLog writes n events of a busy gateway (sessions, calls, results)
// through the real writer and returns the log path and identity.
func benchLog(b *testing.B, n int) (string, *age.X25519Identity) {
	b.Helper()
	id, _ := age.GenerateX25519Identity()
	dir := filepath.Join(b.TempDir(), "audit")
	l, _, err := audit.Open(audit.Options{Dir: dir, Recipient: id.Recipient()})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		s := fmt.Sprintf("S%d", i/50)
		req := fmt.Sprintf("Q%d", i/3)
		var e audit.Event
		switch {
		case i%50 == 0:
			e = approved(s, "B1", 2, "app")
		case i%3 == 0:
			e = act(audit.EventActionRequested, s, req, "http")
		case i%3 == 1:
			e = act(audit.EventActionDispatched, s, req, "http")
		default:
			e = act(audit.EventActionResult, s, req, "http")
			e.Result = &audit.Result{Class: audit.ResultSuccess, Status: 200}
		}
		e.Time = t0.Add(time.Duration(i) * time.Second)
		if _, err := l.Append(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	return filepath.Join(dir, audit.LogFile), id
}

func readAll(b *testing.B, path string, id age.Identity) []audit.Entry {
	var out []audit.Entry
	for e, err := range audit.ReadEvents(path, id) {
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// BenchmarkProjection compares rebuilding both views with the decryption
// every rebuild needs first (the baseline, measured in the same run).
func BenchmarkProjection(b *testing.B) {
	const n = 2000
	path, id := benchLog(b, n)
	entries := readAll(b, path, id)
	b.Run("decrypt_baseline", func(b *testing.B) {
		for b.Loop() {
			readAll(b, path, id)
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	})
	b.Run("sessions_and_activity", func(b *testing.B) {
		for b.Loop() {
			Sessions(entries)
			Activity(entries, Filter{})
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}

// indexBenchEntries is the size of the index benchmarks' log; the default
// keeps `go test -bench` quick, YETT_ACTIVITY_BENCH_ENTRIES=1000000 gives
// the figures in docs/benchmarks.md.
func indexBenchEntries() int {
	if n, err := strconv.Atoi(os.Getenv("YETT_ACTIVITY_BENCH_ENTRIES")); err == nil && n > 0 {
		return n
	}
	return 20000
}

// busyEntries is n entries of a busy gateway, as benchLog writes them: a
// session every 50 entries, calls of three entries (requested, dispatched,
// result).
func busyEntries(n int) []audit.Entry {
	out := make([]audit.Entry, n)
	for i := range n {
		s := fmt.Sprintf("S%d", i/50)
		req := fmt.Sprintf("Q%d", i/3)
		var e audit.Event
		switch {
		case i%50 == 0:
			e = approved(s, "B1", 2, "app")
		case i%3 == 0:
			e = act(audit.EventActionRequested, s, req, "http")
		case i%3 == 1:
			e = act(audit.EventActionDispatched, s, req, "http")
		default:
			e = act(audit.EventActionResult, s, req, "http")
			e.Result = &audit.Result{Class: audit.ResultSuccess, Status: 200}
		}
		e.Time = t0.Add(time.Duration(i) * time.Second)
		idx := int64(i) + int64(i)/256*2 // checkpoint and key records take indexes too
		out[i] = audit.Entry{Index: idx, Event: e, Next: audit.Position{Index: idx + 1, Offset: (idx + 1) * 400, Segment: idx / 258 * 258}}
	}
	return out
}

// BenchmarkIndex: adding entries to the index one by one; the first page of
// Activity and of Sessions from an index in memory (warm) and from its
// encrypted file, as right after an unlock (cold: read, decrypt, decode,
// then the page); saving the file.
func BenchmarkIndex(b *testing.B) {
	n := indexBenchEntries()
	entries := busyEntries(n)
	id, _ := age.GenerateX25519Identity()
	key, err := NewIndexKey(id, audit.LogID{1})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	x := NewIndex()
	for _, e := range entries {
		x.Add(e)
	}
	if err := x.Save(dir, key); err != nil {
		b.Fatal(err)
	}
	b.Run("add", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			y := NewIndex()
			for _, e := range entries {
				y.Add(e)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	})
	b.Run("save", func(b *testing.B) {
		for b.Loop() {
			if err := x.Save(dir, key); err != nil {
				b.Fatal(err)
			}
		}
		fi, _ := os.Stat(filepath.Join(dir, IndexFile))
		b.ReportMetric(float64(fi.Size())/float64(n), "file-bytes/entry")
	})
	b.Run("first-page-warm", func(b *testing.B) {
		for b.Loop() {
			if p := x.Activity(Filter{}, Page{}); len(p.Items) != DefaultPageSize {
				b.Fatal(len(p.Items))
			}
			x.Sessions(Page{})
		}
	})
	b.Run("first-page-cold", func(b *testing.B) {
		for b.Loop() {
			y, err := LoadIndex(dir, key)
			if err != nil {
				b.Fatal(err)
			}
			if p := y.Activity(Filter{}, Page{}); len(p.Items) != DefaultPageSize {
				b.Fatal(len(p.Items))
			}
			y.Sessions(Page{})
		}
	})
}
