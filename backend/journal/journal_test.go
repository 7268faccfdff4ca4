package journal

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
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

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	j, _ := openTemp(t)
	if _, err := j.Begin(ctx, intent("q1", "k1", "B1")); err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(ctx, "q1", Result{Status: 200}); !errors.Is(err, ErrBadState) {
		t.Fatalf("finish before dispatch: %v", err)
	}
	if err := j.Dispatched(ctx, "q1"); err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(ctx, "q1", Result{Status: 201, Class: "success", ResponseBytes: 17, ResponseSHA256: "ab"}); err != nil {
		t.Fatal(err)
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
	prev, err := j.Begin(ctx, intent("q2", "k1", "B2"))
	if !errors.Is(err, ErrKeyInUse) || prev == nil || prev.ID != "q1" {
		t.Fatalf("reuse of a completed key: %v %+v", err, prev)
	}
}

func TestRetryOnlyWhenNothingLeft(t *testing.T) {
	ctx := context.Background()
	j, _ := openTemp(t)
	cases := []struct {
		name   string
		setup  func(id string)
		reuse  bool
		inBoot string
	}{
		{"intent earlier boot", func(string) {}, true, "B2"},
		{"intent same boot", func(string) {}, false, "B1"},
		{"not dispatched", func(id string) { j.NotDispatched(ctx, id, "user_denied") }, true, "B1"},
		{"dispatched", func(id string) { j.Dispatched(ctx, id) }, false, "B2"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := "key-" + tc.name
			id := "a" + string(rune('0'+i))
			if _, err := j.Begin(ctx, intent(id, key, "B1")); err != nil {
				t.Fatal(err)
			}
			tc.setup(id)
			_, err := j.Begin(ctx, intent(id+"-retry", key, tc.inBoot))
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
	j.Begin(ctx, intent("q1", "k1", "B1"))
	j.Dispatched(ctx, "q1")
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
	j, _ := openTemp(t)
	for _, st := range []string{"intent", "not_dispatched", "dispatched", "result"} {
		t.Run(st, func(t *testing.T) {
			key, id := "key-"+st, "q-"+st
			if _, err := j.Begin(ctx, intent(id, key, "B1")); err != nil {
				t.Fatal(err)
			}
			switch st {
			case "not_dispatched":
				j.NotDispatched(ctx, id, "user_denied")
			case "dispatched":
				j.Dispatched(ctx, id)
			case "result":
				j.Dispatched(ctx, id)
				j.Finish(ctx, id, Result{Status: 200})
			}
			other := intent(id+"-2", key, "B2")
			other.RequestSHA256 = "another request"
			prev, err := j.Begin(ctx, other)
			if !errors.Is(err, ErrKeyReused) || prev != nil {
				t.Fatalf("reuse with another request: %v %+v", err, prev)
			}
			if e, _ := j.Lookup(ctx, "sha256:aa", key); e.ID != id {
				t.Fatalf("the earlier call was replaced: %+v", e)
			}
		})
	}
}
