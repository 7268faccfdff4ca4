package activity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
)

// randomEntries makes n entries of a busy, messy gateway: sessions that end
// explicitly or by inference, calls whose entries interleave, repeat, come
// late or lack a request ID, locks, unlocks and restarts.
func randomEntries(rng *rand.Rand, n int) []audit.Entry {
	var out []audit.Entry
	sessions := []string{"S0"}
	reqs := []string{"Q0"}
	pick := func(s []string) string {
		if rng.IntN(10) == 0 {
			return ""
		}
		return s[rng.IntN(len(s))]
	}
	boot := "B0"
	for i := range n {
		e := audit.Event{Time: t0.Add(time.Duration(i) * time.Second), BootID: boot, VaultEpoch: uint64(rng.IntN(4))}
		switch r := rng.IntN(20); {
		case r < 3:
			s := fmt.Sprintf("S%d", len(sessions))
			sessions = append(sessions, s)
			e = approved(s, boot, uint64(rng.IntN(4)), []string{"app", "notification"}[rng.IntN(2)])
			e.Time = t0.Add(time.Duration(i) * time.Second)
		case r < 5:
			e.Type, e.SessionID = audit.EventSessionEnded, pick(sessions)
			e.Reason = []audit.Reason{audit.ReasonProcessExited, audit.ReasonRevoked, audit.ReasonExpired}[rng.IntN(3)]
		case r < 6:
			boot = fmt.Sprintf("B%d", i)
			e.Type, e.BootID = audit.EventGatewayStarted, boot
		case r < 7:
			e.Type, e.Reason = audit.EventVaultLocked, "user"
		case r < 8:
			e.Type = audit.EventVaultUnlocked
		case r < 9:
			// OAuth custody and drills: their details survive the index.
			ok := rng.IntN(2) == 0
			e.Success, e.AuthorizationID = &ok, []string{"az-1", "az-2"}[rng.IntN(2)]
			if rng.IntN(2) == 0 {
				e.Type = []audit.EventType{audit.EventAuthorizationRevoked, audit.EventAuthorizationConnected, audit.EventAuthorizationDisabled}[rng.IntN(3)]
				e.OAuth = &audit.OAuthFacts{Step: []string{"provider_revocation", "verification", "resume", "suspend"}[rng.IntN(4)],
					ErrorCode: []string{"", "refresh_token", "unverified_access_token"}[rng.IntN(3)]}
			} else {
				e.Type = []audit.EventType{audit.EventDrillStarted, audit.EventDrillStep, audit.EventDrillFinished}[rng.IntN(3)]
				e.Drill = &audit.DrillFacts{DrillID: fmt.Sprintf("dr-%d", rng.IntN(3)), Kind: []string{"full", "unattended"}[rng.IntN(2)],
					Step: []string{"", "local_disable", "call_refused"}[rng.IntN(3)]}
			}
		default:
			if rng.IntN(3) == 0 {
				reqs = append(reqs, fmt.Sprintf("Q%d", len(reqs)))
			}
			types := []audit.EventType{audit.EventActionRequested, audit.EventActionDispatched, audit.EventActionResult,
				audit.EventActionDenied, audit.EventApprovalTimeout}
			e.Type, e.SessionID = types[rng.IntN(len(types))], pick(sessions)
			if rng.IntN(15) != 0 {
				e.Action = &audit.Action{RequestID: pick(reqs), Channel: []string{"http", "ssh"}[rng.IntN(2)],
					Operation: "op" + fmt.Sprint(rng.IntN(3)), Target: "api.example.com", CredentialRef: pick([]string{"c1", "c2"})}
			}
			if e.Type == audit.EventActionResult && rng.IntN(5) != 0 {
				e.Result = &audit.Result{Class: []audit.ResultClass{audit.ResultSuccess, audit.ResultServerError, ""}[rng.IntN(3)],
					Status: 200 + rng.IntN(300), Bytes: rng.Int64N(1000), DurationMS: rng.Int64N(100)}
			}
			if e.Type == audit.EventActionDenied {
				e.Reason = audit.ReasonVaultLocked
				if rng.IntN(4) == 0 {
					e.Surface = audit.SurfaceDrill
				}
			}
		}
		// Indexes skip now and then, as checkpoint and key records do.
		idx := int64(i*2 + rng.IntN(2))
		out = append(out, audit.Entry{Index: idx, Event: e, Next: audit.Position{Index: idx + 1, Offset: idx*100 + 100, Segment: -1}})
	}
	return out
}

// pagesOf reads every page of both views with the given page size.
func pagesOf(x *Index, f Filter, limit int) ([]Item, []Session) {
	var items []Item
	for p := (Page{Limit: limit}); ; {
		page := x.Activity(f, p)
		if len(page.Items) > max(limit, 1) || (limit > 0 && page.More && len(page.Items) != limit) {
			panic("page size")
		}
		items = append(items, page.Items...)
		if !page.More {
			break
		}
		p.Before = page.Next
	}
	var sessions []Session
	for p := (Page{Limit: limit}); ; {
		page := x.Sessions(p)
		sessions = append(sessions, page.Sessions...)
		if !page.More {
			break
		}
		p.Before = page.Next
	}
	return items, sessions
}

// sameItems compares items as a person sees them (times by instant).
func sameItems(t *testing.T, what string, got, want []Item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d items, want %d", what, len(got), len(want))
	}
	for k := range got {
		g, w := got[k], want[k]
		if !g.Time.Equal(w.Time) {
			t.Fatalf("%s: item %d time %v, want %v", what, k, g.Time, w.Time)
		}
		g.Time, w.Time = time.Time{}, time.Time{}
		if g.Call != nil && w.Call != nil {
			gc, wc := *g.Call, *w.Call
			if !gc.RequestedAt.Equal(wc.RequestedAt) || !gc.DispatchedAt.Equal(wc.DispatchedAt) {
				t.Fatalf("%s: item %d call times differ", what, k)
			}
			gc.RequestedAt, wc.RequestedAt, gc.DispatchedAt, wc.DispatchedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			g.Call, w.Call = &gc, &wc
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: item %d\n got %+v %+v\nwant %+v %+v", what, k, g, g.Call, w, w.Call)
		}
	}
}

func sameSessions(t *testing.T, what string, got, want []Session) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d sessions, want %d", what, len(got), len(want))
	}
	for k := range got {
		g, w := got[k], want[k]
		if !g.ApprovedAt.Equal(w.ApprovedAt) || !g.EndedAt.Equal(w.EndedAt) {
			t.Fatalf("%s: session %d times differ", what, k)
		}
		g.ApprovedAt, w.ApprovedAt, g.EndedAt, w.EndedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: session %d\n got %+v\nwant %+v", what, k, g, w)
		}
	}
}

// The index, fed one entry at a time and read a page at a time, shows
// exactly what the whole-log projection shows, for every filter, at every
// length of the log, before and after a save and load.
func TestIndexMatchesProjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	filters := []Filter{{}, {SessionID: "S1"}, {Channel: "ssh"}, {Class: ClassDenied}, {Class: ClassPending},
		{Class: Class(audit.ResultSuccess)}, {From: t0.Add(100 * time.Second), To: t0.Add(300 * time.Second)}}
	for round := range 20 {
		entries := randomEntries(rng, 50+rng.IntN(400))
		x := NewIndex()
		for k, e := range entries {
			x.Add(e)
			if k%37 != 0 && k != len(entries)-1 {
				continue
			}
			if rng.IntN(3) == 0 {
				var err error
				if x, err = decodeIndex(mustEncode(t, x), rng.IntN(2) == 0); err != nil {
					t.Fatalf("round %d: decode: %v", round, err)
				}
			}
			for _, f := range filters {
				items, sessions := pagesOf(x, f, 1+rng.IntN(30))
				what := fmt.Sprintf("round %d after %d entries, filter %+v", round, k+1, f)
				sameItems(t, what, items, refActivity(entries[:k+1], f))
				sameSessions(t, what, sessions, refSessions(entries[:k+1]))
			}
			// Each session by its ID is the one the pages show.
			for _, want := range refSessions(entries[:k+1]) {
				got, ok := x.Session(want.ID)
				if !ok {
					t.Fatalf("round %d after %d entries: no session %q by its ID", round, k+1, want.ID)
				}
				sameSessions(t, fmt.Sprintf("round %d after %d entries, session %s", round, k+1, want.ID), []Session{got}, []Session{want})
			}
			if _, ok := x.Session("no-such-session"); ok {
				t.Fatalf("round %d: a session no entry names was found", round)
			}
		}
		if x.Next() != entries[len(entries)-1].Next || x.Entries() != int64(len(entries)) {
			t.Fatalf("round %d: next %+v after %d entries", round, x.Next(), x.Entries())
		}
	}
}

func TestIndexPaging(t *testing.T) {
	x := NewIndex()
	for i := range 25 {
		x.Add(audit.Entry{Index: int64(i), Event: audit.Event{Type: audit.EventVaultUnlocked, Time: t0, VaultEpoch: uint64(i)}})
	}
	p := x.Activity(Filter{}, Page{Limit: 10})
	if len(p.Items) != 10 || !p.More || p.Next != 15 || p.Items[0].Index != 24 {
		t.Fatalf("first page: %d items more %v next %d", len(p.Items), p.More, p.Next)
	}
	p = x.Activity(Filter{}, Page{Before: p.Next, Limit: 10})
	if p.Items[0].Index != 14 || p.Next != 5 || !p.More {
		t.Fatalf("second page: first %d next %d", p.Items[0].Index, p.Next)
	}
	p = x.Activity(Filter{}, Page{Before: p.Next, Limit: 10})
	if len(p.Items) != 5 || p.More || p.Items[4].Index != 0 {
		t.Fatalf("last page: %d items more %v", len(p.Items), p.More)
	}
	if p := x.Activity(Filter{}, Page{Limit: 5000}); len(p.Items) != 25 {
		t.Fatalf("a page of %d", len(p.Items))
	}
	if p := x.Activity(Filter{}, Page{}); len(p.Items) != 25 || p.More {
		t.Fatalf("default page: %d", len(p.Items))
	}
	// A page never hands out the index's own memory.
	p = x.Activity(Filter{}, Page{})
	p.Items[0].Type = "changed"
	if x.Activity(Filter{}, Page{}).Items[0].Type == "changed" {
		t.Fatal("a page aliases the index")
	}
}

func testIndexKey(t testing.TB, id *age.X25519Identity, logID byte) *IndexKey {
	t.Helper()
	k, err := NewIndexKey(id, audit.LogID{logID})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The index file opens only with the key of its own log; any change to it
// makes it unusable (rebuilt from the log), never misread; nothing in it is
// readable without the key.
func TestIndexFileEncrypted(t *testing.T) {
	id, _ := age.GenerateX25519Identity()
	other, _ := age.GenerateX25519Identity()
	dir := t.TempDir()
	x := NewIndex()
	for _, e := range randomEntries(rand.New(rand.NewPCG(1, 1)), 200) {
		x.Add(e)
	}
	secret := "CANARY-activity-" + fmt.Sprint(rand.Int())
	x.Add(audit.Entry{Index: 999, Event: audit.Event{Type: audit.EventSessionApproved, SessionID: secret, Time: t0}})
	k := testIndexKey(t, id, 1)
	if err := x.Save(dir, k); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, IndexFile))
	if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("api.example.com")) {
		t.Fatal("the index file holds plaintext")
	}
	if fi, _ := os.Stat(filepath.Join(dir, IndexFile)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("index file mode %v", fi.Mode())
	}
	y, err := LoadIndex(dir, k)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustEncode(t, y), mustEncode(t, x)) {
		t.Fatal("loaded index differs")
	}
	for name, key := range map[string]*IndexKey{"other identity": testIndexKey(t, other, 1), "other log": testIndexKey(t, id, 2)} {
		if _, err := LoadIndex(dir, key); !errors.Is(err, ErrIndexUnusable) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, off := range []int{0, len(indexMagic) + 3, len(b) / 2, len(b) - 1} {
		mod := bytes.Clone(b)
		mod[off] ^= 1
		os.WriteFile(filepath.Join(dir, IndexFile), mod, 0o600)
		if _, err := LoadIndex(dir, k); !errors.Is(err, ErrIndexUnusable) {
			t.Errorf("byte %d changed: %v", off, err)
		}
	}
	os.Remove(filepath.Join(dir, IndexFile))
	if _, err := LoadIndex(dir, k); !errors.Is(err, ErrIndexUnusable) {
		t.Errorf("missing file: %v", err)
	}
	k.Wipe()
	if err := x.Save(dir, k); err == nil {
		t.Error("saved with a wiped key")
	}
}

// An index fed from the real log, resumed from a saved copy at its Next,
// ends where one fed the whole log in one go ends.
func TestIndexResumesFromTheLog(t *testing.T) {
	id, _ := age.GenerateX25519Identity()
	dir := filepath.Join(t.TempDir(), "audit")
	l, _, err := audit.Open(audit.Options{Dir: dir, Recipient: id.Recipient(), CheckpointEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	add := func(from, to int) {
		for i := from; i < to; i++ {
			e := act(audit.EventActionRequested, fmt.Sprintf("S%d", i%3), fmt.Sprintf("Q%d", i/2), "http")
			e.Time = t0.Add(time.Duration(i) * time.Second)
			if _, err := l.Append(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(dir, audit.LogFile)
	catchUp := func(x *Index) {
		for e, err := range audit.ReadEventsFrom(path, id, x.Next()) {
			if err != nil {
				t.Fatal(err)
			}
			x.Add(e)
		}
	}
	add(0, 23)
	x := NewIndex()
	catchUp(x)
	k := testIndexKey(t, id, 1)
	if err := x.Save(dir, k); err != nil {
		t.Fatal(err)
	}
	add(23, 41)
	l.Close()
	y, err := LoadIndex(dir, k)
	if err != nil {
		t.Fatal(err)
	}
	catchUp(y)
	whole := NewIndex()
	catchUp(whole)
	if !bytes.Equal(mustEncode(t, y), mustEncode(t, whole)) {
		t.Fatal("a resumed index differs from one built in one go")
	}
	if whole.Entries() != 41 {
		t.Fatalf("%d entries", whole.Entries())
	}
}

// FuzzIndexDecode feeds arbitrary bytes to the index decoder (the index
// file is authenticated, but the decoder must not trust even that): no
// panic, no allocation beyond the input's size, and whatever decodes reads
// and re-encodes to something that decodes the same.
func FuzzIndexDecode(f *testing.F) {
	x := NewIndex()
	for _, e := range randomEntries(rand.New(rand.NewPCG(3, 4)), 60) {
		x.Add(e)
	}
	f.Add(mustEncode(f, x))
	f.Add(mustEncode(f, NewIndex()))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Lazily: pages first, as the app reads a loaded index.
		y, err := decodeIndex(b, false)
		if err != nil {
			return
		}
		pagesOf(y, Filter{}, 7)
		y.Activity(Filter{}, Page{Before: 5})
		if y.Damaged() != nil {
			return
		}
		again, err := y.encode()
		if err != nil {
			return
		}
		z, err := decodeIndex(again, true)
		if err != nil || !bytes.Equal(mustEncode(t, z), again) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}

func mustEncode(t testing.TB, x *Index) []byte {
	t.Helper()
	b, err := x.encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A loaded index shows its first page after decoding only the newest items;
// an entry that is not a call is added without decoding the rest; what
// cannot be decoded further down makes it Damaged, never wrong.
func TestIndexLoadsLazily(t *testing.T) {
	entries := busyEntries(3000)
	x := NewIndex()
	for _, e := range entries {
		x.Add(e)
	}
	b := mustEncode(t, x)
	y, err := decodeIndex(b, false)
	if err != nil {
		t.Fatal(err)
	}
	first := y.Activity(Filter{}, Page{Limit: 10})
	if y.lazy == nil || y.lazy.left < len(y.items)-20 {
		t.Fatalf("the first page decoded %d of %d items", len(y.items)-y.lazy.left, len(y.items))
	}
	sameItems(t, "first page", first.Items, x.Activity(Filter{}, Page{Limit: 10}).Items)
	y.Add(audit.Entry{Index: 99999, Event: audit.Event{Type: audit.EventVaultLocked, Time: t0, Reason: "user"}})
	if y.lazy == nil {
		t.Fatal("adding an authority event decoded everything")
	}
	if got := y.Activity(Filter{}, Page{Limit: 1}).Items[0]; got.Index != 99999 {
		t.Fatalf("newest item %d", got.Index)
	}
	y.Add(entries[len(entries)-1]) // a call entry: the call map needs everything
	if y.lazy != nil || y.Damaged() != nil {
		t.Fatalf("after a call entry: lazy %v damaged %v", y.lazy != nil, y.Damaged())
	}

	// Cut the encoding short: the newest items still decode, the rest is
	// missing, and the index says so.
	z, err := decodeIndex(b[:len(b)*2/3], false)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := pagesOf(z, Filter{}, 50)
	if z.Damaged() == nil || len(items) == 0 || len(items) >= len(x.items) {
		t.Fatalf("damaged %v, %d of %d items", z.Damaged(), len(items), len(x.items))
	}
	sameItems(t, "undamaged part", items, x.Activity(Filter{}, Page{Limit: len(items)}).Items)
	if _, err := z.encode(); err == nil {
		t.Fatal("a damaged index encodes")
	}
}
