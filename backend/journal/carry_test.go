package journal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
)

// carriedBy is what the gateway gives every opener of the audit log
// (gateway.CarriedAudit), here without the gateway.
func carriedBy(dir string) func() ([]audit.Carried, error) {
	return func() ([]audit.Carried, error) {
		recs, err := ReadCarried(dir)
		out := make([]audit.Carried, len(recs))
		for i, c := range recs {
			out[i] = audit.Carried{Log: audit.LogID(c.Log), Offset: c.Offset, Record: c.Record}
		}
		return out, err
	}
}

func openCarriedAudit(dir string, id *age.X25519Identity, carried func() ([]audit.Carried, error)) (*audit.Log, audit.OpenReport, error) {
	return audit.Open(audit.Options{Dir: filepath.Join(dir, "audit"), Recipient: id.Recipient(), CheckpointAfter: -1, Carried: carried})
}

// TestCarriedCopiesLeaveOnlyAfterTheAuditSync: a rewrite drops the audit
// records the log carries only after the audit log's sync returned, and
// keeps them when it fails; copies an earlier process left survive a
// rewrite until an audit log attaches.
func TestCarriedCopiesLeaveOnlyAfterTheAuditSync(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte{7}
	for i := range 3 {
		seq, err := j.Carry(id, int64(100*i), []byte(fmt.Sprintf("record %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := j.WaitCarried(seq); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadCarried(dir)
	if err != nil || len(got) != 3 || got[2].Offset != 200 || string(got[2].Record) != "record 2" || got[0].Log != id {
		t.Fatalf("carried copies read back: %+v %v", got, err)
	}
	// The audit log's sync fails: the copies stay.
	j.CarrySync(func() error { return errors.New("disk gone") })
	j.mu.Lock()
	err = j.wal.rewrite(nil, nil)
	j.mu.Unlock()
	if err == nil {
		t.Fatal("a rewrite went on after the audit log could not sync")
	}
	if got, _ := ReadCarried(dir); len(got) != 3 {
		t.Fatalf("copies after a failed audit sync: %d, want 3", len(got))
	}
	synced := 0
	j.CarrySync(func() error { synced++; return nil })
	j.mu.Lock()
	err = j.wal.rewrite(nil, nil)
	j.mu.Unlock()
	if err != nil || synced != 1 {
		t.Fatalf("rewrite: %v, audit syncs %d", err, synced)
	}
	if got, _ := ReadCarried(dir); len(got) != 0 {
		t.Fatalf("copies after the audit log synced: %d, want 0", len(got))
	}

	// Copies left by a process that died: kept by Open's rewrite, dropped
	// once an audit log attaches (it restored from them when opened).
	j.CarrySync(nil)
	seq, _ := j.Carry(id, 300, []byte("record 3"))
	j.WaitCarried(seq)
	j.wal.f.Close() // "dies" without Close
	j2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if got, _ := ReadCarried(dir); len(got) != 1 || got[0].Offset != 300 {
		t.Fatalf("left copies after a reopen: %+v", got)
	}
	j2.CarrySync(func() error { return nil })
	j2.mu.Lock()
	j2.wal.rewrite(nil, nil)
	j2.mu.Unlock()
	if got, _ := ReadCarried(dir); len(got) != 0 {
		t.Fatalf("left copies after an audit log attached: %d", len(got))
	}
}

// carryHelper writes calls from 8 goroutines the way the gateway does (the
// journal's dispatch queued, the audit intent appended and carried, one
// group commit for both), prints the audit file's size when carrying
// started and every call acknowledged, and at the fourth fsync of the
// journal's log freezes its leader, others waiting, until it is killed.
func carryHelper(spec string) {
	dir, key, _ := strings.Cut(spec, "|")
	ident, err := age.ParseX25519Identity(key)
	if err != nil {
		fmt.Println("identity:", err)
		os.Exit(1)
	}
	j, err := OpenWith(filepath.Join(dir, FileName), Options{ResultDelay: time.Hour})
	if err != nil {
		fmt.Println("open journal:", err)
		os.Exit(1)
	}
	l, _, err := openCarriedAudit(dir, ident, carriedBy(dir))
	if err != nil {
		fmt.Println("open audit:", err)
		os.Exit(1)
	}
	for i := range 3 { // records the file holds on its own, before carrying
		if _, err := l.Append(context.Background(), audit.Event{Type: audit.EventGatewayStarted, Time: time.Now().UTC(), BootID: fmt.Sprint("own-", i)}); err != nil {
			fmt.Println("append:", err)
			os.Exit(1)
		}
	}
	if err := l.CarryBy(j); err != nil {
		fmt.Println("carry:", err)
		os.Exit(1)
	}
	fi, _ := os.Stat(filepath.Join(dir, "audit", audit.LogFile))
	fmt.Println("start", fi.Size(), l.Head().Size)
	var mu sync.Mutex
	syncs := 0
	j.wal.hookBeforeSync = func() {
		mu.Lock()
		syncs++
		n := syncs
		mu.Unlock()
		if n == 4 {
			time.Sleep(50 * time.Millisecond)
			fmt.Println("leader")
			select {}
		}
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	ctx := context.Background()
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("q-%d-%d", g, i)
				_, durable, err := j.DispatchQueued(ctx, intent(id, "k-"+id, "B1"))
				if err != nil {
					return
				}
				idx, err := l.Append(ctx, audit.Event{Type: audit.EventGatewayStarted, Time: time.Now().UTC(), BootID: id})
				if err != nil || durable() != nil {
					return
				}
				out.Lock()
				fmt.Println("acked", id, idx)
				out.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestCarriedAuditSurvivesAKilledLeaderAndAPowerLoss: the audit log's
// records ride the journal's group commit. The writer is killed (SIGKILL)
// while one writer leads a commit. Opened as the kill left it, both hold
// every acknowledged call. Opened as a power loss could leave it at worst
// (the audit file cut back to its last own fsync, when carrying started),
// the audit log gets back every acknowledged record from the journal's
// copies and verifies; opened without them it would have lost them, and
// without reading them it refuses to open.
func TestCarriedAuditSurvivesAKilledLeaderAndAPowerLoss(t *testing.T) {
	ident, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var startBytes, startRecords int64
	acked := map[string]int64{}
	killAtLeader(t, "YETT_JOURNAL_CARRY="+dir+"|"+ident.String(), func(l string) bool {
		f := strings.Fields(l)
		switch {
		case len(f) == 3 && f[0] == "start":
			startBytes, _ = strconv.ParseInt(f[1], 10, 64)
			startRecords, _ = strconv.ParseInt(f[2], 10, 64)
		case len(f) == 3 && f[0] == "acked":
			acked[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
		default:
			return false
		}
		return true
	})
	if len(acked) == 0 || startBytes == 0 {
		t.Fatalf("nothing acknowledged (start at %d bytes)", startBytes)
	}
	var newest int64
	for _, idx := range acked {
		newest = max(newest, idx)
	}
	powerLoss := copyTree(t, dir)
	if err := os.Truncate(filepath.Join(powerLoss, "audit", audit.LogFile), startBytes); err != nil {
		t.Fatal(err)
	}
	torn := copyTree(t, dir) // the file's end holds part of the first carried record
	if err := os.Truncate(filepath.Join(torn, "audit", audit.LogFile), startBytes+7); err != nil {
		t.Fatal(err)
	}
	withoutCopies := copyTree(t, powerLoss)
	unread := copyTree(t, powerLoss)

	check := func(name, d string, wantRestored bool) {
		t.Helper()
		l, rep, err := openCarriedAudit(d, ident, carriedBy(d))
		if err != nil {
			t.Fatalf("%s: open the audit log: %v", name, err)
		}
		if size := l.Head().Size; size <= newest {
			t.Fatalf("%s: the audit log holds %d records, the newest acknowledged is index %d", name, size, newest)
		}
		if wantRestored != (rep.Restored > 0) {
			t.Fatalf("%s: %d records restored", name, rep.Restored)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if rep := audit.Verify(filepath.Join(d, "audit", audit.LogFile), audit.VerifyOptions{}); rep.Status != audit.StatusIntact {
			t.Fatalf("%s: the offline verifier: %v", name, rep.Err)
		}
		j, err := Open(filepath.Join(d, FileName))
		if err != nil {
			t.Fatalf("%s: reopen the journal: %v", name, err)
		}
		defer j.Close()
		for id := range acked {
			if _, err := j.Lookup(context.Background(), "sha256:aa", "k-"+id); err != nil {
				t.Fatalf("%s: acknowledged call %s lost from the journal: %v", name, id, err)
			}
		}
	}
	check("as killed", dir, false)
	check("after a power loss", powerLoss, true)
	check("after a power loss that tore a record", torn, true)

	l, _, err := openCarriedAudit(withoutCopies, ident, func() ([]audit.Carried, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	// What it had when carrying started, and the checkpoint Open signs.
	if size := l.Head().Size; size != startRecords+1 || size > newest {
		t.Fatalf("without the copies the log holds %d records, want the %d it had when carrying started and a checkpoint (newest acknowledged: %d)", size, startRecords, newest)
	}
	l.Close()
	if _, _, err := openCarriedAudit(unread, ident, nil); !errors.Is(err, audit.ErrCarriedUnread) {
		t.Fatalf("open without reading the copies: %v, want ErrCarriedUnread", err)
	}
}

func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}
