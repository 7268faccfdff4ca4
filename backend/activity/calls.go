package activity

import (
	"slices"
	"strconv"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// CallState is how far a call got, as the log tells it.
type CallState string

const (
	CallRequested  CallState = "requested"  // intent recorded, nothing after it
	CallDenied     CallState = "denied"     // refused, with a reason; it never left
	CallDispatched CallState = "dispatched" // sent; no result recorded
	CallCompleted  CallState = "completed"  // a result is recorded
)

// Class is the coarse outcome a person filters Activity by: a result class,
// or "denied", or "pending" (no result recorded yet, or never).
type Class string

const (
	ClassDenied  Class = "denied"
	ClassPending Class = "pending"
)

// Call is one requested action: the entries sharing its request id.
type Call struct {
	RequestID     string
	SessionID     string
	Channel       string
	Operation     string
	Target        string
	CredentialRef string // opaque binding id, never a value

	State        CallState
	Class        Class
	RequestedAt  time.Time // first entry's time
	DenyReason   audit.Reason
	DispatchedAt time.Time
	Result       *audit.Result
	Indexes      []int64 // every log entry of this call
}

// ItemKind says whether an Activity item is a call or an authority change.
type ItemKind string

const (
	ItemCall      ItemKind = "call"
	ItemAuthority ItemKind = "authority"
)

// Item is one line of the Activity view: a call, or an event that changed
// who may do what (gateway start and stop, vault lock and unlock, session
// approved and ended, approval timeouts, log recovery, OAuth and SSH events).
type Item struct {
	Kind       ItemKind
	Index      int64 // the call's first entry, or the event's entry
	Time       time.Time
	Type       audit.EventType // the event's type; for a call, its first entry's
	SessionID  string
	Reason     audit.Reason
	VaultEpoch uint64
	BootID     string
	Call       *Call // set when Kind is ItemCall
}

// Filter narrows Activity. Zero fields do not filter. Channel and Class
// select calls only; SessionID keeps the calls and events of one session.
type Filter struct {
	SessionID string
	Channel   string
	Class     Class
	From      time.Time // inclusive
	To        time.Time // exclusive
}

// Activity returns the calls and authority events in entries that match f,
// newest first. entries must be in log order.
func Activity(entries []audit.Entry, f Filter) []Item {
	var items []*Item
	calls := map[string]*Item{}
	for _, e := range entries {
		ev := e.Event
		if !isCallEvent(ev) {
			// Includes a call entry without an action: it cannot be tied to
			// a call, so it is shown as it is rather than dropped.
			items = append(items, &Item{
				Kind: ItemAuthority, Index: e.Index, Time: ev.Time, Type: ev.Type, SessionID: ev.SessionID,
				Reason: ev.Reason, VaultEpoch: ev.VaultEpoch, BootID: ev.BootID,
			})
			continue
		}
		key := ev.Action.RequestID
		if key == "" {
			key = "#" + strconv.FormatInt(e.Index, 10)
		}
		it := calls[key]
		if it == nil {
			c := &Call{
				RequestID: ev.Action.RequestID, Channel: ev.Action.Channel, Operation: ev.Action.Operation,
				Target: ev.Action.Target, CredentialRef: ev.Action.CredentialRef, RequestedAt: ev.Time,
				State: CallRequested,
			}
			it = &Item{Kind: ItemCall, Index: e.Index, Time: ev.Time, Type: ev.Type, BootID: ev.BootID, VaultEpoch: ev.VaultEpoch, Call: c}
			calls[key] = it
			items = append(items, it)
		}
		applyCallEntry(it, e)
	}
	out := make([]Item, 0, len(items))
	for _, it := range items {
		if it.Call != nil {
			it.Call.Class = classOf(it.Call)
		}
		if f.matches(it) {
			out = append(out, *it)
		}
	}
	slices.Reverse(out)
	return out
}

func isCallEvent(ev audit.Event) bool {
	switch ev.Type {
	case audit.EventActionRequested, audit.EventActionDenied, audit.EventActionDispatched, audit.EventActionResult, audit.EventApprovalTimeout:
		return ev.Action != nil
	}
	return false
}

// applyCallEntry folds one entry into its call. States only move forward:
// a late or repeated entry cannot turn a result back into "dispatched".
func applyCallEntry(it *Item, e audit.Entry) {
	c, ev := it.Call, e.Event
	c.Indexes = append(c.Indexes, e.Index)
	if c.SessionID == "" {
		c.SessionID = ev.SessionID
		it.SessionID = ev.SessionID
	}
	switch ev.Type {
	case audit.EventActionDenied, audit.EventApprovalTimeout:
		c.DenyReason = ev.Reason
		if c.DenyReason == "" && ev.Type == audit.EventApprovalTimeout {
			c.DenyReason = audit.ReasonApprovalTimeout
		}
		if c.State != CallCompleted {
			c.State = CallDenied
		}
	case audit.EventActionDispatched:
		c.DispatchedAt = ev.Time
		if c.State == CallRequested {
			c.State = CallDispatched
		}
	case audit.EventActionResult:
		if ev.Result != nil {
			r := *ev.Result
			c.Result = &r
		}
		c.State = CallCompleted
	}
}

func classOf(c *Call) Class {
	switch c.State {
	case CallDenied:
		return ClassDenied
	case CallCompleted:
		if c.Result != nil && c.Result.Class != "" {
			return Class(c.Result.Class)
		}
		return Class(audit.ResultUnknown)
	}
	return ClassPending
}

func (f Filter) matches(it *Item) bool {
	if !f.From.IsZero() && it.Time.Before(f.From) {
		return false
	}
	if !f.To.IsZero() && !it.Time.Before(f.To) {
		return false
	}
	if f.SessionID != "" && it.SessionID != f.SessionID {
		return false
	}
	if f.Channel != "" || f.Class != "" {
		if it.Call == nil {
			return false
		}
		if f.Channel != "" && it.Call.Channel != f.Channel {
			return false
		}
		if f.Class != "" && it.Call.Class != f.Class {
			return false
		}
	}
	return true
}
