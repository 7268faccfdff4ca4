package activity

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// logged writes events through the real audit log writer and reads them
// back decrypted, so the projections see exactly what the app would.
func logged(t *testing.T, events ...audit.Event) []audit.Entry {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "audit")
	l, _, err := audit.Open(audit.Options{Dir: dir, Recipient: id.Recipient(), CheckpointEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if e.Time.IsZero() {
			e.Time = t0.Add(time.Duration(i) * time.Minute)
		}
		if _, err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for e, err := range audit.ReadEvents(filepath.Join(dir, audit.LogFile), id) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if len(out) != len(events) {
		t.Fatalf("read %d entries, wrote %d", len(out), len(events))
	}
	return out
}

func run(id string, pid int) *audit.RunBinding {
	return &audit.RunBinding{RunID: id, PID: pid, StartTime: t0, Executable: "/usr/bin/claude",
		ExecutableHash: "ab12", Signer: "unsigned", LaunchNonce: "n-" + id}
}

func approved(session, boot string, epoch uint64, surface string) audit.Event {
	return audit.Event{Type: audit.EventSessionApproved, SessionID: session, ApprovalID: "A" + session, BootID: boot,
		VaultEpoch: epoch, Run: run(session, 100), ApprovedBy: "ana", Surface: surface}
}

func ended(session string, r audit.Reason) audit.Event {
	return audit.Event{Type: audit.EventSessionEnded, SessionID: session, Reason: r}
}

func act(typ audit.EventType, session, req, channel string) audit.Event {
	return audit.Event{Type: typ, SessionID: session, Action: &audit.Action{RequestID: req, Channel: channel, Operation: "get", Target: "api.example.com"}}
}

type sessionWant struct {
	id       string
	ended    bool
	reason   audit.Reason
	inferred bool
	calls    int
}

func TestSessions(t *testing.T) {
	cases := []struct {
		name   string
		events []audit.Event
		want   []sessionWant // newest first
	}{
		{"empty log", nil, nil},
		{"vault events only", []audit.Event{
			{Type: audit.EventVaultUnlocked, VaultEpoch: 2}, {Type: audit.EventVaultLocked, VaultEpoch: 3, Reason: "user"},
		}, nil},
		{"each explicit end reason", []audit.Event{
			approved("S1", "B1", 2, "app"), ended("S1", audit.ReasonProcessExited),
			approved("S2", "B1", 2, "notification"), ended("S2", audit.ReasonIdentityMismatch),
			approved("S3", "B1", 2, "app"), ended("S3", audit.ReasonRevoked),
			approved("S4", "B1", 2, "app"), ended("S4", audit.ReasonExpired),
			approved("S5", "B1", 2, "app"), ended("S5", audit.ReasonGatewayRestarted),
			approved("S6", "B1", 2, "app"), ended("S6", audit.ReasonVaultLocked),
		}, []sessionWant{
			{"S6", true, audit.ReasonVaultLocked, false, 0}, {"S5", true, audit.ReasonGatewayRestarted, false, 0},
			{"S4", true, audit.ReasonExpired, false, 0}, {"S3", true, audit.ReasonRevoked, false, 0},
			{"S2", true, audit.ReasonIdentityMismatch, false, 0}, {"S1", true, audit.ReasonProcessExited, false, 0},
		}},
		{"open session counts its calls", []audit.Event{
			approved("S1", "B1", 2, "app"),
			act(audit.EventActionRequested, "S1", "Q1", "http"), act(audit.EventActionRequested, "S1", "Q2", "http"),
		}, []sessionWant{{"S1", false, "", false, 2}}},
		{"gateway restart ends sessions of the old boot only", []audit.Event{
			approved("S1", "B1", 2, "app"),
			{Type: audit.EventGatewayStarted, BootID: "B2", PreviousBootID: "B1"},
			approved("S2", "B2", 2, "app"),
		}, []sessionWant{{"S2", false, "", false, 0}, {"S1", true, audit.ReasonGatewayRestarted, true, 0}}},
		{"vault lock ends every open session", []audit.Event{
			approved("S1", "B1", 2, "app"), approved("S2", "B1", 2, "app"),
			{Type: audit.EventVaultLocked, VaultEpoch: 3, Reason: "idle"},
		}, []sessionWant{{"S2", true, audit.ReasonVaultLocked, true, 0}, {"S1", true, audit.ReasonVaultLocked, true, 0}}},
		{"explicit end after the inferred one wins", []audit.Event{
			approved("S1", "B1", 2, "app"),
			{Type: audit.EventVaultLocked, VaultEpoch: 3, Reason: "user"},
			ended("S1", audit.ReasonVaultLocked),
		}, []sessionWant{{"S1", true, audit.ReasonVaultLocked, false, 0}}},
		{"explicit end is not overwritten by a later lock", []audit.Event{
			approved("S1", "B1", 2, "app"), ended("S1", audit.ReasonRevoked),
			{Type: audit.EventVaultLocked, VaultEpoch: 3, Reason: "user"},
		}, []sessionWant{{"S1", true, audit.ReasonRevoked, false, 0}}},
		{"end without approval in the log", []audit.Event{
			ended("S9", audit.ReasonExpired),
		}, []sessionWant{{"S9", true, audit.ReasonExpired, false, 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Sessions(logged(t, tc.events...))
			if len(got) != len(tc.want) {
				t.Fatalf("got %d sessions, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.ID != w.id || g.Ended != w.ended || g.EndReason != w.reason || g.EndInferred != w.inferred || g.Calls != w.calls {
					t.Errorf("session %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestSessionKeepsWhoApproved(t *testing.T) {
	got := Sessions(logged(t, approved("S1", "B1", 4, "notification"), ended("S1", audit.ReasonProcessExited)))
	s := got[0]
	if s.ApprovedBy != "ana" || s.Surface != "notification" || s.Run == nil || s.Run.PID != 100 || s.BootID != "B1" || s.VaultEpoch != 4 {
		t.Fatalf("%+v", s)
	}
	if !s.ApprovedAt.Equal(t0) || !s.EndedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("times: %v %v", s.ApprovedAt, s.EndedAt)
	}
}

func TestActivity(t *testing.T) {
	result := func(session, req string, class audit.ResultClass, status int) audit.Event {
		e := act(audit.EventActionResult, session, req, "http")
		e.Result = &audit.Result{Class: class, Status: status, Bytes: 10, DurationMS: 5}
		return e
	}
	denied := act(audit.EventActionDenied, "S1", "Q2", "http")
	denied.Reason = audit.ReasonVaultLocked
	events := []audit.Event{
		{Type: audit.EventVaultUnlocked, VaultEpoch: 2},      // 0
		approved("S1", "B1", 2, "app"),                       // 1
		act(audit.EventActionRequested, "S1", "Q1", "http"),  // 2
		act(audit.EventActionDispatched, "S1", "Q1", "http"), // 3
		result("S1", "Q1", audit.ResultSuccess, 200),         // 4
		act(audit.EventActionRequested, "S1", "Q2", "http"),  // 5
		denied, // 6
		act(audit.EventActionRequested, "S2", "Q3", "ssh"),                                                           // 7
		act(audit.EventActionDispatched, "S2", "Q3", "ssh"),                                                          // 8
		act(audit.EventActionRequested, "S2", "Q4", "http"),                                                          // 9
		result("S2", "Q4", audit.ResultServerError, 502),                                                             // 10
		{Type: audit.EventVaultLocked, VaultEpoch: 3, Reason: "user"},                                                // 11
		{Type: audit.EventApprovalTimeout, SessionID: "S2", Action: &audit.Action{RequestID: "Q5", Channel: "http"}}, // 12
	}
	entries := logged(t, events...)
	// Checkpoint records take log indexes too; tests speak of positions.
	pos := map[int64]int64{}
	for i, e := range entries {
		pos[e.Index] = int64(i)
	}
	type want struct {
		kind  ItemKind
		index int64
		state CallState
		class Class
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	cases := []struct {
		name string
		f    Filter
		want []int64 // item indexes, newest first
	}{
		{"everything", Filter{}, []int64{12, 11, 9, 7, 5, 2, 1, 0}},
		{"session S1", Filter{SessionID: "S1"}, []int64{5, 2, 1}},
		{"channel ssh", Filter{Channel: "ssh"}, []int64{7}},
		{"denied", Filter{Class: ClassDenied}, []int64{12, 5}},
		{"success", Filter{Class: Class(audit.ResultSuccess)}, []int64{2}},
		{"server errors", Filter{Class: Class(audit.ResultServerError)}, []int64{9}},
		{"pending", Filter{Class: ClassPending}, []int64{7}},
		{"time range", Filter{From: at(5), To: at(9)}, []int64{7, 5}},
		{"session and class", Filter{SessionID: "S2", Class: ClassPending}, []int64{7}},
		{"nothing matches", Filter{Channel: "ftp"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			for _, it := range Activity(entries, tc.f) {
				got = append(got, pos[it.Index])
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("items %v, want %v", got, tc.want)
			}
		})
	}

	byIndex := map[int64]Item{}
	for _, it := range Activity(entries, Filter{}) {
		byIndex[pos[it.Index]] = it
	}
	checks := []struct {
		index int64
		want  want
	}{
		{2, want{ItemCall, 2, CallCompleted, Class(audit.ResultSuccess)}},
		{5, want{ItemCall, 5, CallDenied, ClassDenied}},
		{7, want{ItemCall, 7, CallDispatched, ClassPending}},
		{9, want{ItemCall, 9, CallCompleted, Class(audit.ResultServerError)}},
		{12, want{ItemCall, 12, CallDenied, ClassDenied}},
		{11, want{ItemAuthority, 11, "", ""}},
	}
	for _, c := range checks {
		it := byIndex[c.index]
		if it.Kind != c.want.kind {
			t.Errorf("item %d kind %q", c.index, it.Kind)
			continue
		}
		if it.Call == nil {
			continue
		}
		if it.Call.State != c.want.state || it.Call.Class != c.want.class {
			t.Errorf("item %d: state %q class %q, want %q %q", c.index, it.Call.State, it.Call.Class, c.want.state, c.want.class)
		}
	}
	if r := byIndex[5].Call.DenyReason; r != audit.ReasonVaultLocked {
		t.Errorf("deny reason %q", r)
	}
	if r := byIndex[12].Call.DenyReason; r != audit.ReasonApprovalTimeout {
		t.Errorf("timeout reason %q", r)
	}
	if c := byIndex[2].Call; !slices.Equal(c.Indexes, []int64{entries[2].Index, entries[3].Index, entries[4].Index}) || c.Result.Status != 200 || c.DispatchedAt.IsZero() {
		t.Errorf("call Q1: %+v", c)
	}
	if it := byIndex[11]; it.Type != audit.EventVaultLocked || it.Reason != "user" || it.VaultEpoch != 3 {
		t.Errorf("lock item: %+v", it)
	}
}

// A late duplicate dispatched entry cannot move a completed call backwards.
func TestCallStateOnlyMovesForward(t *testing.T) {
	r := act(audit.EventActionResult, "S1", "Q1", "http")
	r.Result = &audit.Result{Class: audit.ResultSuccess}
	items := Activity(logged(t,
		act(audit.EventActionRequested, "S1", "Q1", "http"), r, act(audit.EventActionDispatched, "S1", "Q1", "http"),
	), Filter{})
	if len(items) != 1 || items[0].Call.State != CallCompleted {
		t.Fatalf("%+v", items)
	}
}

// TestCallPathsAndVaultChanges: an HTTP call's item names its path, and a
// person's change to the vault names what changed and what it changed
// (issue 25: Activity showed "vault changed" with no subject and calls
// without their path); both survive the index file.
func TestCallPathsAndVaultChanges(t *testing.T) {
	call := act(audit.EventActionRequested, "S1", "Q1", "http")
	call.Action.Path = "/repos/yett/issues"
	events := []audit.Event{
		{Type: audit.EventVaultChanged, VaultChange: &audit.VaultChange{Change: "credential_added", CredentialID: "cred_1", Name: "github", Version: 1}},
		{Type: audit.EventVaultChanged, VaultChange: &audit.VaultChange{Change: "ssh_host_added", Name: "web-1"}},
		{Type: audit.EventVaultChanged, VaultChange: &audit.VaultChange{Change: "passphrase_changed"}},
		call,
	}
	x := NewIndex()
	for _, e := range logged(t, events...) {
		x.Add(e)
	}
	b, err := x.encode()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := decodeIndex(b, true)
	if err != nil {
		t.Fatal(err)
	}
	for name, idx := range map[string]*Index{"built": x, "loaded from its file": loaded} {
		items := idx.Activity(Filter{}, Page{Limit: 10}).Items
		if len(items) != 4 {
			t.Fatalf("%s: %d items", name, len(items))
		}
		if c := items[0].Call; c == nil || c.Path != "/repos/yett/issues" {
			t.Errorf("%s: the call %+v", name, c)
		}
		want := []Detail{{Change: "passphrase_changed"}, {Change: "ssh_host_added", Subject: "web-1"},
			{Change: "credential_added", CredentialID: "cred_1", Subject: "github"}}
		for i, w := range want {
			if got := items[i+1].Detail; got != w {
				t.Errorf("%s: item %d has %+v, want %+v", name, i+1, got, w)
			}
		}
	}
}

func TestClipPath(t *testing.T) {
	long := "/" + strings.Repeat("é", audit.MaxPathLen)
	got := audit.ClipPath(long)
	if len(got) > audit.MaxPathLen || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("clipped to %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got[len(got)-8:])
	}
	if audit.ClipPath("/a/b") != "/a/b" || audit.ClipPath("/\xff") != "/\uFFFD" {
		t.Fatal("a short path is not kept as it is, or invalid UTF-8 is kept")
	}
}
