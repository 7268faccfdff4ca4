package activity

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// Index is the Sessions and Activity projections kept up to date one entry
// at a time, read a page at a time, newest first. It holds what the views
// show and nothing else; it is as secret as the decrypted log and is only
// ever stored encrypted (Save).
//
// Add must see entries in log order, each once; Next says where reading the
// log resumes. The result is exactly what Activity and Sessions compute from
// the same entries (TestIndexMatchesProjection).
//
// An Index is not safe for concurrent use; its owner serialises access.
type Index struct {
	next    audit.Position // where reading the log resumes
	entries int64          // events added

	strs   []string          // strings that repeat (types, targets, session IDs...), kept once
	strIDs map[string]uint32 // strs[id] -> id

	items []item // by first index, ascending
	// lazy holds the items a loaded index has not decoded yet: they are
	// decoded newest first, as pages need them, so that the first page of
	// a large index is shown without decoding it all (items[:lazy.left]
	// are not decoded). nil once everything is.
	lazy *lazyItems
	// damaged is why decoding the rest of a loaded index failed; items
	// below floor are then missing. The owner rebuilds the index.
	damaged error
	floor   int
	// calls maps a request key to the call's position in items. It is
	// built when first needed (see callMap): a page needs none, so a loaded
	// index shows its first page without building it.
	calls map[string]int

	sessions []*Session          // by first index, ascending
	byID     map[string]*Session // session ID -> session
	open     map[*Session]bool   // sessions whose end is not recorded
}

// item is one Activity line, compactly: a call (the entries sharing its
// request ID) or an authority event. Repeated strings are ids into strs.
type item struct {
	index        int64 // the call's first entry, or the event's entry
	time         int64 // UnixNano of that entry, UTC
	dispatchedAt int64 // UnixNano, noTime when not dispatched
	requestID    string
	path         string  // an HTTP call's path (audit.Action.Path)
	indexes      []int64 // every entry of a call
	epoch        uint64
	result       audit.Result // of a call, when hasResult
	hasResult    bool
	call         bool
	drill        bool  // a call of Yett's own drill client
	state        uint8 // CallState, see states
	typ, session, reason, boot,
	channel, operation, target, credRef, denyReason, resultClass uint32
	// detail is an authority event's facts (authorityDetail), interned.
	detail uint32
}

const noTime = math.MinInt64

var states = []CallState{CallRequested, CallDenied, CallDispatched, CallCompleted}

func stateID(s CallState) uint8 {
	for i, v := range states {
		if v == s {
			return uint8(i)
		}
	}
	return 0
}

// NewIndex returns an empty index: reading starts at the log's beginning.
func NewIndex() *Index {
	return &Index{strIDs: map[string]uint32{"": 0}, strs: []string{""}, calls: map[string]int{},
		byID: map[string]*Session{}, open: map[*Session]bool{}}
}

// Next is where reading the log resumes: the position after the last entry
// added.
func (x *Index) Next() audit.Position { return x.next }

// Entries is how many events have been added.
func (x *Index) Entries() int64 { return x.entries }

// Damaged reports a loaded index whose older items could not be decoded;
// it then shows only the newer ones, and its owner should rebuild it.
func (x *Index) Damaged() error { return x.damaged }

// item returns items[k], decoding down to it first.
func (x *Index) item(k int) *item {
	x.decodeDownTo(k)
	return &x.items[k]
}

// decodeDownTo decodes the items of a loaded index down to position k.
func (x *Index) decodeDownTo(k int) {
	for x.lazy != nil && x.lazy.left > k {
		if err := x.lazy.next(x); err != nil {
			x.damaged, x.floor, x.lazy = err, x.lazy.left+1, nil
		}
	}
}

// decodeBelow decodes until the items at or above index are all decoded.
func (x *Index) decodeBelow(index int64) {
	for x.lazy != nil && x.lazy.left > 0 && (x.lazy.left == len(x.items) || x.items[x.lazy.left].index >= index) {
		x.decodeDownTo(x.lazy.left - 1)
	}
}

func (x *Index) intern(s string) uint32 {
	if id, ok := x.strIDs[s]; ok {
		return id
	}
	id := uint32(len(x.strs))
	x.strs = append(x.strs, s)
	x.strIDs[s] = id
	return id
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == noTime {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Add folds one entry into both projections. Entries must come in log order.
func (x *Index) Add(e audit.Entry) {
	x.addActivity(e)
	x.addSession(e)
	x.entries++
	x.next = e.Next
}

func (x *Index) addActivity(e audit.Entry) {
	ev := e.Event
	if !isCallEvent(ev) {
		// Includes a call entry without an action: it cannot be tied to a
		// call, so it is shown as it is rather than dropped.
		x.items = append(x.items, item{
			index: e.Index, time: unixNano(ev.Time), dispatchedAt: noTime, typ: x.intern(string(ev.Type)),
			session: x.intern(ev.SessionID), reason: x.intern(string(ev.Reason)), epoch: ev.VaultEpoch, boot: x.intern(ev.BootID),
			detail: x.intern(authorityDetail(&ev)),
		})
		return
	}
	key := requestKey(ev.Action.RequestID, e.Index)
	pos, ok := x.callMap()[key]
	if !ok {
		a := ev.Action
		x.items = append(x.items, item{
			index: e.Index, time: unixNano(ev.Time), dispatchedAt: noTime, call: true, requestID: a.RequestID, path: a.Path,
			typ: x.intern(string(ev.Type)), boot: x.intern(ev.BootID), epoch: ev.VaultEpoch,
			channel: x.intern(a.Channel), operation: x.intern(a.Operation), target: x.intern(a.Target),
			credRef: x.intern(a.CredentialRef), state: stateID(CallRequested), drill: ev.Surface == audit.SurfaceDrill,
		})
		pos = len(x.items) - 1
		x.calls[key] = pos
	}
	x.applyCall(&x.items[pos], e)
}

// requestKey names a call: its request ID, or for an entry without one the
// entry itself.
func requestKey(requestID string, index int64) string {
	if requestID == "" {
		return "#" + strconv.FormatInt(index, 10)
	}
	return requestID
}

func (x *Index) callMap() map[string]int {
	if x.calls == nil {
		x.decodeDownTo(0)
		x.calls = make(map[string]int, len(x.items))
		for k := x.floor; k < len(x.items); k++ {
			if it := &x.items[k]; it.call {
				x.calls[requestKey(it.requestID, it.index)] = k
			}
		}
	}
	return x.calls
}

// applyCall folds one entry into its call. States only move forward: a
// late or repeated entry cannot turn a result back into "dispatched".
func (x *Index) applyCall(it *item, e audit.Entry) {
	ev := e.Event
	it.indexes = append(it.indexes, e.Index)
	if it.session == 0 {
		it.session = x.intern(ev.SessionID)
	}
	switch ev.Type {
	case audit.EventActionDenied, audit.EventApprovalTimeout:
		reason := ev.Reason
		if reason == "" && ev.Type == audit.EventApprovalTimeout {
			reason = audit.ReasonApprovalTimeout
		}
		it.denyReason = x.intern(string(reason))
		if states[it.state] != CallCompleted {
			it.state = stateID(CallDenied)
		}
	case audit.EventActionDispatched:
		it.dispatchedAt = unixNano(ev.Time)
		if states[it.state] == CallRequested {
			it.state = stateID(CallDispatched)
		}
	case audit.EventActionResult:
		if ev.Result != nil {
			it.result, it.hasResult = *ev.Result, true
			it.resultClass = x.intern(string(ev.Result.Class))
		}
		it.state = stateID(CallCompleted)
	}
}

func (x *Index) addSession(e audit.Entry) {
	ev := e.Event
	get := func() *Session {
		s := x.byID[ev.SessionID]
		if s == nil {
			s = &Session{ID: ev.SessionID, FirstIndex: e.Index}
			x.byID[s.ID] = s
			x.sessions = append(x.sessions, s)
			x.open[s] = true
		}
		s.LastIndex = e.Index
		return s
	}
	// end applies an inferred end to every session still open that ok
	// accepts.
	end := func(reason audit.Reason, ok func(*Session) bool) {
		for s := range x.open {
			if ok(s) {
				s.Ended, s.EndedAt, s.EndReason, s.EndInferred = true, ev.Time, reason, true
				s.LastIndex = e.Index
				delete(x.open, s)
			}
		}
	}
	switch ev.Type {
	case audit.EventSessionApproved:
		if ev.SessionID == "" {
			return
		}
		s := get()
		s.ApprovalID, s.BootID, s.VaultEpoch = ev.ApprovalID, ev.BootID, ev.VaultEpoch
		s.ApprovedAt, s.ApprovedBy, s.Surface = ev.Time, ev.ApprovedBy, ev.Surface
		if v := ev.Via; v != nil {
			// The index keeps one word for where; how it was checked goes
			// with it (issue 18: an approval says where it came from).
			s.Surface = viaWords(v)
		}
		if ev.Run != nil {
			run := *ev.Run
			s.Run = &run
		}
	case audit.EventSessionEnded:
		if ev.SessionID == "" {
			return
		}
		s := get()
		// An explicit end wins over one inferred earlier.
		if !s.Ended || s.EndInferred {
			s.Ended, s.EndedAt, s.EndReason, s.EndInferred = true, ev.Time, ev.Reason, false
			delete(x.open, s)
		}
		if s.BootID == "" {
			s.BootID = ev.BootID
		}
		if s.Run == nil && ev.Run != nil {
			run := *ev.Run
			s.Run = &run
		}
	case audit.EventActionRequested:
		if ev.SessionID != "" {
			get().Calls++
		}
	case audit.EventGatewayStarted:
		end(audit.ReasonGatewayRestarted, func(s *Session) bool { return s.BootID != ev.BootID })
	case audit.EventVaultLocked:
		end(audit.ReasonVaultLocked, func(*Session) bool { return true })
	case audit.EventVaultUnlocked:
		end(audit.ReasonVaultStateChanged, func(s *Session) bool { return s.VaultEpoch < ev.VaultEpoch })
	}
}

// DefaultPageSize is the page size when a Page asks for none; MaxPageSize
// bounds what one page may hold.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// Page asks for one page, newest first.
type Page struct {
	// Before: only items (sessions) whose first log index is below it.
	// Zero or less starts at the newest.
	Before int64
	Limit  int // DefaultPageSize when zero or less, at most MaxPageSize
}

func (p Page) limit() int {
	switch {
	case p.Limit <= 0:
		return DefaultPageSize
	case p.Limit > MaxPageSize:
		return MaxPageSize
	}
	return p.Limit
}

// start is the position below which a newest-first walk over n values
// ordered by first index (at(k)) begins.
func (p Page) start(n int, at func(int) int64) int {
	if p.Before <= 0 {
		return n
	}
	return sort.Search(n, func(k int) bool { return at(k) >= p.Before })
}

// ItemPage is one page of Activity. More says older items match too; Next
// is the Before of the page that holds them.
type ItemPage struct {
	Items []Item
	More  bool
	Next  int64
}

// Activity returns the page of items matching f, newest first.
func (x *Index) Activity(f Filter, p Page) ItemPage {
	out := ItemPage{Items: []Item{}}
	limit := p.limit()
	if p.Before > 0 {
		// Undecoded items are zero (index 0), below any Before: the search
		// over the whole slice stays ordered.
		x.decodeBelow(p.Before)
	}
	for k := p.start(len(x.items), func(k int) int64 { return x.items[k].index }) - 1; k >= 0; k-- {
		if x.item(k); k < x.floor {
			break
		}
		it := x.view(&x.items[k])
		if !f.matches(&it) {
			continue
		}
		if len(out.Items) == limit {
			out.More, out.Next = true, out.Items[limit-1].Index
			break
		}
		out.Items = append(out.Items, it)
	}
	return out
}

// view is the Item an item stands for, sharing nothing with the index.
func (x *Index) view(it *item) Item {
	v := Item{
		Kind: ItemAuthority, Index: it.index, Time: fromUnixNano(it.time), Type: audit.EventType(x.strs[it.typ]),
		SessionID: x.strs[it.session], Reason: audit.Reason(x.strs[it.reason]), VaultEpoch: it.epoch, BootID: x.strs[it.boot],
	}
	if !it.call {
		v.Detail = parseDetail(x.strs[it.detail])
		return v
	}
	c := &Call{
		Drill:     it.drill,
		RequestID: it.requestID, SessionID: x.strs[it.session], Channel: x.strs[it.channel], Operation: x.strs[it.operation],
		Target: x.strs[it.target], Path: it.path, CredentialRef: x.strs[it.credRef], State: states[it.state], RequestedAt: v.Time,
		DenyReason: audit.Reason(x.strs[it.denyReason]), DispatchedAt: fromUnixNano(it.dispatchedAt),
		Indexes: append([]int64(nil), it.indexes...),
	}
	if it.hasResult {
		r := it.result
		c.Result = &r
	}
	c.Class = classOf(c)
	v.Kind, v.Call = ItemCall, c
	return v
}

// SessionPage is one page of Sessions; see ItemPage.
type SessionPage struct {
	Sessions []Session
	More     bool
	Next     int64
}

// Sessions returns the page of sessions, newest first (by the first entry
// naming each).
func (x *Index) Sessions(p Page) SessionPage {
	out := SessionPage{Sessions: []Session{}}
	limit := p.limit()
	for k := p.start(len(x.sessions), func(k int) int64 { return x.sessions[k].FirstIndex }) - 1; k >= 0; k-- {
		if len(out.Sessions) == limit {
			out.More, out.Next = true, out.Sessions[limit-1].FirstIndex
			break
		}
		s := *x.sessions[k]
		if s.Run != nil {
			run := *s.Run
			s.Run = &run
		}
		out.Sessions = append(out.Sessions, s)
	}
	return out
}

// Session returns the session with this ID as Sessions shows it, sharing
// nothing with the index; false when no entry names it.
func (x *Index) Session(id string) (Session, bool) {
	s, ok := x.byID[id]
	if !ok || id == "" {
		return Session{}, false
	}
	out := *s
	if s.Run != nil {
		run := *s.Run
		out.Run = &run
	}
	return out, true
}

// viaWords is an approval's surface with what Yett checked of it.
func viaWords(v *audit.Via) string {
	out := v.Surface
	if v.Detail != "" {
		out += " (" + v.Detail + ")"
	}
	if v.Verified != "" {
		out += ", verified: " + v.Verified
	}
	return out
}

// Detail is what an authority event of OAuth custody or of a revocation
// drill says beyond its type: the step, whether it succeeded, the error
// code, the authorization, the drill and its kind. Zero for other events.
type Detail struct {
	Step            string
	Outcome         string // "ok", "failed", or "" when the entry says neither
	Code            string
	AuthorizationID string
	DrillID         string
	DrillKind       string
	// A person's change to the vault (vault_changed): what changed
	// (credential_added, secret_rotated, ssh_host_added...), and the
	// credential's id and the name of what it changed, if any.
	Change       string
	CredentialID string
	Subject      string
}

// authorityDetail is Detail packed into one string to intern (most repeat).
func authorityDetail(ev *audit.Event) string {
	var d Detail
	switch {
	case ev.OAuth != nil:
		d.Step, d.Code = ev.OAuth.Step, ev.OAuth.ErrorCode
	case ev.Drill != nil:
		d.Step, d.DrillID, d.DrillKind = ev.Drill.Step, ev.Drill.DrillID, ev.Drill.Kind
	case ev.VaultChange != nil:
		d.Change, d.CredentialID, d.Subject = ev.VaultChange.Change, ev.VaultChange.CredentialID, ev.VaultChange.Name
	default:
		return ""
	}
	d.AuthorizationID = ev.AuthorizationID
	if ev.Success != nil {
		d.Outcome = map[bool]string{true: "ok", false: "failed"}[*ev.Success]
	}
	return strings.Join([]string{d.Step, d.Outcome, d.Code, d.AuthorizationID, d.DrillID, d.DrillKind,
		d.Change, d.CredentialID, d.Subject}, "\x1f")
}

func parseDetail(s string) Detail {
	f := strings.Split(s, "\x1f")
	if len(f) != 9 {
		return Detail{}
	}
	return Detail{Step: f[0], Outcome: f[1], Code: f[2], AuthorizationID: f[3], DrillID: f[4], DrillKind: f[5],
		Change: f[6], CredentialID: f[7], Subject: f[8]}
}
