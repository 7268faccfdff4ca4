package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

func (c *fileKeyCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}

func TestFileKeysAreWipedAtLock(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	first, _ := f.svc.Activity(ActivityFilter{})
	n := f.svc.fileKeys.size()
	if n == 0 || n != len(first.Items) {
		t.Fatalf("cached %d keys for %d entries", n, len(first.Items))
	}
	again, _ := f.svc.Activity(ActivityFilter{})
	if len(again.Items) != len(first.Items) || f.svc.fileKeys.size() != n {
		t.Fatalf("a second read changed the result or the cache: %d %d", len(again.Items), f.svc.fileKeys.size())
	}
	f.vault.Lock("user")
	if got := f.svc.fileKeys.size(); got != 0 {
		t.Fatalf("%d file keys survive the lock", got)
	}
}

// BenchmarkActivityReread: rebuilding the Activity view of a 500-entry log
// with the file-key cache warm, against the cold read (the baseline, which
// pays one X25519 unwrap per entry), in the same run.
func BenchmarkActivityReread(b *testing.B) {
	dir := b.TempDir()
	v, err := vault.Open(dir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	sink := &eventSink{}
	svc := newAuditService(v, sink, slog.New(slog.DiscardHandler), filepath.Join(dir, "audit"), time.Hour)
	defer svc.close()
	if err := v.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		b.Fatal(err)
	}
	svc.mu.Lock()
	for i := range 500 {
		svc.w.Append(context.Background(), audit.Event{Type: audit.EventActionRequested, Time: time.Now(), SessionID: "S1",
			Action: &audit.Action{RequestID: string(rune('a' + i%26)), Channel: "http"}})
	}
	svc.mu.Unlock()
	b.Run("cold_baseline", func(b *testing.B) {
		for b.Loop() {
			svc.fileKeys.wipe()
			svc.Activity(ActivityFilter{})
		}
	})
	b.Run("warm", func(b *testing.B) {
		svc.Activity(ActivityFilter{})
		for b.Loop() {
			svc.Activity(ActivityFilter{})
		}
	})
}
