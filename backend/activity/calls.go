package activity

import (
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
	// Drill: a call of Yett's own revocation drill client, not an agent's.
	Drill         bool
	RequestID     string
	SessionID     string
	Channel       string
	Operation     string
	Target        string
	Path          string // an HTTP call's path, no query ("" for other channels)
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
	// Detail: an OAuth custody or drill event's facts (authority items).
	Detail Detail
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
// newest first. entries must be in log order. It is the whole of what an
// Index built from the same entries shows, page after page.
func Activity(entries []audit.Entry, f Filter) []Item {
	x := NewIndex()
	for _, e := range entries {
		x.Add(e)
	}
	out := []Item{}
	for p := (Page{Limit: MaxPageSize}); ; {
		page := x.Activity(f, p)
		out = append(out, page.Items...)
		if !page.More {
			return out
		}
		p.Before = page.Next
	}
}

func isCallEvent(ev audit.Event) bool {
	switch ev.Type {
	case audit.EventActionRequested, audit.EventActionDenied, audit.EventActionDispatched, audit.EventActionResult, audit.EventApprovalTimeout:
		return ev.Action != nil
	}
	return false
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
