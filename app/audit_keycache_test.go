package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/vault"
)

func (c *indexCache) state() (loaded bool, entries int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x == nil {
		return c.key != nil, 0
	}
	return true, c.x.Entries()
}

// appendCalls writes n call entries through the app's own writer.
func appendCalls(t testing.TB, s *AuditService, from, n int) {
	t.Helper()
	w := s.keeper.AuditLog()
	for i := from; i < from+n; i++ {
		if _, err := w.Append(context.Background(), audit.Event{Type: audit.EventActionRequested, Time: time.Now().UTC(), SessionID: "S1",
			Action: &audit.Action{RequestID: fmt.Sprintf("q-%d", i), Channel: "http", Operation: "get", Target: "api.example.com"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// The views read an index that grows with the log: a second read decrypts
// only what was added since. At a lock the index is saved encrypted and
// dropped with its key; after the unlock it is loaded again, not rebuilt.
func TestIndexFollowsTheLogAndIsDroppedAtLock(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	first, _ := f.svc.Activity(ActivityFilter{})
	_, n := f.svc.index.state()
	if n == 0 || int64(len(first.Items)) != n {
		t.Fatalf("indexed %d entries for %d items", n, len(first.Items))
	}
	appendCalls(t, f.svc, 0, 5)
	again, _ := f.svc.Activity(ActivityFilter{})
	if _, m := f.svc.index.state(); m != n+5 || len(again.Items) != len(first.Items)+5 || again.Items[0].RequestID != "q-4" {
		t.Fatalf("after 5 appends: %d indexed, %d items, newest %+v", m, len(again.Items), again.Items[0])
	}
	f.vault.Lock("user")
	if loaded, _ := f.svc.index.state(); loaded {
		t.Fatal("the index or its key survives the lock")
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "audit", activity.IndexFile))
	if err != nil {
		t.Fatal("no index saved at the lock")
	}
	if bytes.Contains(b, []byte("q-4")) || bytes.Contains(b, []byte("api.example.com")) {
		t.Fatal("the saved index is readable without the key")
	}
	if err := f.vault.Unlock(vault.Passphrase("correct horse battery")); err != nil {
		t.Fatal(err)
	}
	after, _ := f.svc.Activity(ActivityFilter{})
	// The lock and the unlock were added; nothing was indexed twice.
	if _, m := f.svc.index.state(); m != n+5+2 || len(after.Items) != len(again.Items)+2 {
		t.Fatalf("after the unlock: %d indexed, %d items", m, len(after.Items))
	}
}

// Pages: newest first, Before and Limit from the view, More and Next back.
func TestActivityPages(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	appendCalls(t, f.svc, 0, 25)
	var got []string
	for p := (ActivityFilter{Channel: "http", Limit: 10}); ; {
		v, err := f.svc.Activity(p)
		if err != nil || !v.Readable {
			t.Fatalf("%+v %v", v, err)
		}
		for _, it := range v.Items {
			got = append(got, it.RequestID)
		}
		if !v.More {
			break
		}
		p.Before = v.Next
	}
	if len(got) != 25 || got[0] != "q-24" || got[24] != "q-0" {
		t.Fatalf("pages gave %v", got)
	}
	if s := f.svc.Sessions(PageRequest{Limit: 1}); len(s.Sessions) != 1 || s.More {
		t.Fatalf("sessions %+v", s)
	}
}

// A log too long to index within one view is indexed in the background:
// the views say so meanwhile, the UI is told when it is done, and a lock
// stops it.
func TestIndexLongLogInTheBackground(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	appendCalls(t, f.svc, 0, 3000)
	f.svc.index.budget = time.Microsecond
	v, _ := f.svc.Activity(ActivityFilter{})
	if !strings.Contains(v.Note, "being indexed") {
		_, n := f.svc.index.state()
		t.Fatalf("note %q, %d items, %d indexed, readable %v", v.Note, len(v.Items), n, v.Readable)
	}
	waitFor(t, func() bool {
		v, _ := f.svc.Activity(ActivityFilter{})
		return v.Note == "" && len(v.Items) > 0 && v.Items[0].RequestID == "q-2999"
	})
	waitFor(t, func() bool { return strings.Contains(f.rec.all(), EventAuditChanged) })

	// A lock while it runs stops it and keeps nothing.
	f.svc.index.wipe()
	os.Remove(filepath.Join(f.dir, "audit", activity.IndexFile))
	f.svc.Activity(ActivityFilter{})
	f.vault.Lock("user")
	if loaded, _ := f.svc.index.state(); loaded {
		t.Fatal("the index survives the lock")
	}
}

// BenchmarkActivityPage: the first page of Activity through the service,
// with the index up to date (what every refresh costs) and, as the
// baseline in the same run, with the index dropped and loaded again from
// its file (what the first view after an unlock costs).
func BenchmarkActivityPage(b *testing.B) {
	dir := b.TempDir()
	v, err := vault.Open(dir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	k, err := keeper.Open(keeper.Config{DataDir: dir, RuntimeDir: b.TempDir(), Vault: v})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	sink := &eventSink{}
	svc := newAuditService(v, k, sink, slog.New(slog.DiscardHandler), time.Hour)
	defer svc.close()
	if err := v.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		b.Fatal(err)
	}
	appendCalls(b, svc, 0, 2000)
	svc.Activity(ActivityFilter{})
	b.Run("indexed", func(b *testing.B) {
		for b.Loop() {
			svc.Activity(ActivityFilter{})
		}
	})
	b.Run("after_unlock", func(b *testing.B) {
		for b.Loop() {
			svc.index.wipe()
			svc.Activity(ActivityFilter{})
		}
	})
}
