package activity

import (
	"context"
	"fmt"
	"path/filepath"
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
