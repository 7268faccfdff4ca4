package journal

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/store"
)

func openTemp(t *testing.T) (*Journal, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j, path
}

func intent(id, key, boot string) Intent {
	return Intent{ID: id, Scope: "sha256:aa", Key: key, BootID: boot, RunID: "R1", Method: "POST",
		Target: "127.0.0.1:1", Path: "/x", CredentialRef: "c1", RequestBytes: 3, RequestSHA256: "h"}
}

// oldIntent writes a row the way journals before one-step dispatch did: a
// call accepted in boot, never marked dispatched. The journal at path is
// closed while the row is written and reopened, as an upgrade would find it.
func oldIntent(t *testing.T, j **Journal, path, id, key, boot string) {
	t.Helper()
	(*j).Close()
	db, err := store.Open(path, history)
	if err != nil {
		t.Fatal(err)
	}
	in := intent(id, key, boot)
	now := time.Now().UnixNano()
	if err := db.Exec(`INSERT INTO journal_calls (id, scope, idem_key, state, boot_id, run_id, method, target, path,
		credential_ref, request_bytes, request_sha256, created_unix_nano, updated_unix_nano)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, in.ID, in.Scope, in.Key, string(StateIntent), in.BootID, in.RunID,
		in.Method, in.Target, in.Path, in.CredentialRef, in.RequestBytes, in.RequestSHA256, now, now).Error; err != nil {
		t.Fatal(err)
	}
	store.Close(db)
	if *j, err = Open(path); err != nil {
		t.Fatal(err)
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	j, _ := openTemp(t)
	if _, err := j.Dispatch(ctx, intent("q1", "k1", "B1")); err != nil {
		t.Fatal(err)
	}
	if e, _ := j.Lookup(ctx, "sha256:aa", "k1"); e.State != StateDispatched {
		t.Fatalf("after dispatch: %+v", e)
	}
	if err := j.Finish(ctx, "q1", Result{Status: 201, Class: "success", ResponseBytes: 17, ResponseSHA256: "ab"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(ctx, "q1", Result{Status: 500}); !errors.Is(err, ErrBadState) {
		t.Fatalf("a second result: %v", err)
	}
	if err := j.NotSent(ctx, "q1", "late"); !errors.Is(err, ErrBadState) {
		t.Fatalf("not sent after a result: %v", err)
	}
	e, err := j.Lookup(ctx, "sha256:aa", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if e.State != StateResult || e.Result.Status != 201 || e.Result.ResponseBytes != 17 || e.RequestSHA256 != "h" || e.Path != "/x" {
		t.Fatalf("entry %+v", e)
	}
	if _, err := j.Lookup(ctx, "sha256:bb", "k1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other scope sees the key: %v", err)
	}
	prev, err := j.Dispatch(ctx, intent("q2", "k1", "B2"))
	if !errors.Is(err, ErrKeyInUse) || prev == nil || prev.ID != "q1" {
		t.Fatalf("reuse of a completed key: %v %+v", err, prev)
	}
}

func TestRetryOnlyWhenNothingLeft(t *testing.T) {
	ctx := context.Background()
	j, path := openTemp(t)
	t.Cleanup(func() { j.Close() }) // the journal oldIntent reopened
	cases := []struct {
		name   string
		setup  func(id, key string)
		reuse  bool
		inBoot string
	}{
		{"intent earlier boot", func(id, key string) { oldIntent(t, &j, path, id, key, "B1") }, true, "B2"},
		{"intent same boot", func(id, key string) { oldIntent(t, &j, path, id, key, "B1") }, false, "B1"},
		{"not sent", func(id, key string) {
			j.Dispatch(ctx, intent(id, key, "B1"))
			j.NotSent(ctx, id, "audit_unavailable")
		}, true, "B1"},
		{"dispatched", func(id, key string) { j.Dispatch(ctx, intent(id, key, "B1")) }, false, "B2"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := "key-" + tc.name
			id := "a" + string(rune('0'+i))
			tc.setup(id, key)
			_, err := j.Dispatch(ctx, intent(id+"-retry", key, tc.inBoot))
			if tc.reuse != (err == nil) {
				t.Fatalf("reuse=%v err=%v", tc.reuse, err)
			}
		})
	}
}

func TestSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Dispatch(ctx, intent("q1", "k1", "B1"))
	if prev, err := j.StartBoot(ctx, "B1"); err != nil || prev != "" {
		t.Fatal(prev, err)
	}
	for i := 0; i < 2; i++ { // the same run approved twice in a boot
		if err := j.RecordRun(ctx, Run{BootID: "B1", RunID: "R1", PID: 42, StartKey: 7, ExeSHA256: "sha256:aa"}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()

	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	e, err := j.Lookup(ctx, "sha256:aa", "k1")
	if err != nil || e.State != StateDispatched || e.BootID != "B1" {
		t.Fatalf("%+v %v", e, err)
	}
	if prev, err := j.StartBoot(ctx, "B2"); err != nil || prev != "B1" {
		t.Fatal(prev, err)
	}
	ev, err := j.EvidenceFor(ctx, "B2", 42, 7, "sha256:aa")
	if err != nil || !ev.SameProcessEarlierBoot || ev.SameExecutableApproved {
		t.Fatalf("%+v %v", ev, err)
	}
	ev, _ = j.EvidenceFor(ctx, "B2", 43, 9, "sha256:aa")
	if ev.SameProcessEarlierBoot || !ev.SameExecutableApproved {
		t.Fatalf("%+v", ev)
	}
	ev, _ = j.EvidenceFor(ctx, "B1", 42, 7, "sha256:aa")
	if ev.SameProcessEarlierBoot {
		t.Fatalf("current boot counted as earlier: %+v", ev)
	}
}

// The journal is its own database with its own schema history: none of the
// vault's tables (and so none of its sealed records) ever land in it.
func TestOwnSchemaOnly(t *testing.T) {
	j, _ := openTemp(t)
	var names []string
	if err := j.db.Raw(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	want := []string{"journal_boots", "journal_calls", "journal_runs", "schema_version"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("tables %v, want %v", names, want)
	}
}

// A key names one request: reused with another request it is refused in
// every state, and the earlier call's fate is not handed back.
func TestKeyNamesOneRequest(t *testing.T) {
	ctx := context.Background()
	j, path := openTemp(t)
	t.Cleanup(func() { j.Close() }) // the journal oldIntent reopened
	for _, st := range []string{"intent", "not_dispatched", "dispatched", "result"} {
		t.Run(st, func(t *testing.T) {
			key, id := "key-"+st, "q-"+st
			switch st {
			case "intent":
				oldIntent(t, &j, path, id, key, "B0")
			case "not_dispatched":
				j.Dispatch(ctx, intent(id, key, "B1"))
				j.NotSent(ctx, id, "audit_unavailable")
			case "dispatched":
				j.Dispatch(ctx, intent(id, key, "B1"))
			case "result":
				j.Dispatch(ctx, intent(id, key, "B1"))
				j.Finish(ctx, id, Result{Status: 200})
			}
			other := intent(id+"-2", key, "B2")
			other.RequestSHA256 = "another request"
			prev, err := j.Dispatch(ctx, other)
			if !errors.Is(err, ErrKeyReused) || prev != nil {
				t.Fatalf("reuse with another request: %v %+v", err, prev)
			}
			if e, _ := j.Lookup(ctx, "sha256:aa", key); e.ID != id {
				t.Fatalf("the earlier call was replaced: %+v", e)
			}
		})
	}
}

// Concurrent writes share transactions (and so fsyncs), and a refusal in a
// batch does not undo the others.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	j, _ := openTemp(t)
	j.Dispatch(ctx, intent("taken", "k-taken", "B1"))
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	before := j.Syncs()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("k-%d", i)
			if i%8 == 0 {
				key = "k-taken" // refused: in use
			}
			_, errs[i] = j.Dispatch(ctx, intent(fmt.Sprintf("q-%d", i), key, "B1"))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		want := i%8 != 0
		if (err == nil) != want {
			t.Fatalf("write %d: %v", i, err)
		}
		if want {
			if e, err := j.Lookup(ctx, "sha256:aa", fmt.Sprintf("k-%d", i)); err != nil || e.State != StateDispatched {
				t.Fatalf("write %d not durable: %+v %v", i, e, err)
			}
		}
	}
	if c := j.Syncs() - before; c >= n {
		t.Fatalf("%d fsyncs for %d concurrent writes: no group commit", c, n)
	}
}

// A context that ended before the write writes nothing and says so.
func TestCancelledBeforeTheWrite(t *testing.T) {
	j, _ := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Dispatch(ctx, intent("q1", "k1", "B1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if _, err := j.Lookup(context.Background(), "sha256:aa", "k1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a cancelled write landed: %v", err)
	}
}

// Sequential calls whose results are written with FinishSoon cost one fsync
// each: the next call's Dispatch makes the previous result durable in the
// same group commit. Close makes the last one durable.
func TestFinishSoonRidesTheNextCommit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	j, err := OpenWith(path, Options{ResultDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	before := j.Syncs()
	for i := range n {
		id := fmt.Sprintf("q-%d", i)
		if _, err := j.Dispatch(ctx, intent(id, "k-"+id, "B1")); err != nil {
			t.Fatal(err)
		}
		if err := j.FinishSoon(ctx, id, Result{Status: 201}); err != nil {
			t.Fatal(err)
		}
	}
	if c := j.Syncs() - before; c != n {
		t.Fatalf("%d fsyncs for %d sequential calls, want one each", c, n)
	}
	if d, s := j.wal.durableSeq(), j.wal.seq; d != s-1 {
		t.Fatalf("durable %d of %d frames: only the last result should wait", d, s)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := range n {
		id := fmt.Sprintf("q-%d", i)
		if e, err := j.Lookup(ctx, "sha256:aa", "k-"+id); err != nil || e.State != StateResult || e.Result.Status != 201 {
			t.Fatalf("%s after Close and Open: %+v %v", id, e, err)
		}
	}
}

// A result nobody else commits is made durable by the journal itself,
// within twice the result delay.
func TestFinishSoonFlushesByItself(t *testing.T) {
	ctx := context.Background()
	j, err := OpenWith(filepath.Join(t.TempDir(), FileName), Options{ResultDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	j.Dispatch(ctx, intent("q1", "k1", "B1"))
	syncs := j.Syncs()
	if err := j.FinishSoon(ctx, "q1", Result{Status: 200}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for j.wal.durableSeq() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the queued result never became durable")
		}
		time.Sleep(time.Millisecond)
	}
	if c := j.Syncs() - syncs; c != 1 {
		t.Fatalf("%d fsyncs for one queued result", c)
	}
}

// A final state that is not durable yet stays out of the database: were it
// folded, a crash before its record is durable would replay the older,
// dispatched record over it. It is folded once durable.
func TestFoldWaitsForADurableResult(t *testing.T) {
	ctx := context.Background()
	j, err := OpenWith(filepath.Join(t.TempDir(), FileName), Options{ResultDelay: time.Hour, FoldEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	j.Dispatch(ctx, intent("q1", "k1", "B1"))
	j.FinishSoon(ctx, "q1", Result{Status: 200})
	inDB := func() string {
		var state string
		j.sqlDB.QueryRow(`SELECT state FROM journal_calls WHERE id = 'q1'`).Scan(&state)
		return state
	}
	if err := j.fold(false); err != nil {
		t.Fatal(err)
	}
	if s := inDB(); s != "" {
		t.Fatalf("a result not yet durable was folded: %q", s)
	}
	j.Dispatch(ctx, intent("q2", "k2", "B1")) // its commit covers q1's result
	if err := j.fold(false); err != nil {
		t.Fatal(err)
	}
	if s := inDB(); s != string(StateResult) {
		t.Fatalf("the durable result was not folded: %q", s)
	}
}
