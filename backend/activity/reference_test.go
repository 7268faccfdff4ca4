package activity

// The projections as they were before the index: a whole-log fold, kept
// here verbatim as the reference the index must agree with.

import (
	"slices"
	"strconv"

	"github.com/yettdev/yett/backend/audit"
)

// Activity returns the calls and authority events in entries that match f,
// newest first. entries must be in log order.
func refActivity(entries []audit.Entry, f Filter) []Item {
	var items []*Item
	calls := map[string]*Item{}
	for _, e := range entries {
		ev := e.Event
		if !isCallEvent(ev) {
			// Includes a call entry without an action: it cannot be tied to
			// a call, so it is shown as it is rather than dropped.
			it := &Item{
				Kind: ItemAuthority, Index: e.Index, Time: ev.Time, Type: ev.Type, SessionID: ev.SessionID,
				Reason: ev.Reason, VaultEpoch: ev.VaultEpoch, BootID: ev.BootID,
			}
			outcome := ""
			if ev.Success != nil {
				outcome = map[bool]string{true: "ok", false: "failed"}[*ev.Success]
			}
			switch {
			case ev.OAuth != nil:
				it.Detail = Detail{Step: ev.OAuth.Step, Outcome: outcome, Code: ev.OAuth.ErrorCode, AuthorizationID: ev.AuthorizationID}
			case ev.Drill != nil:
				it.Detail = Detail{Step: ev.Drill.Step, Outcome: outcome, AuthorizationID: ev.AuthorizationID, DrillID: ev.Drill.DrillID, DrillKind: ev.Drill.Kind}
			}
			items = append(items, it)
			continue
		}
		key := ev.Action.RequestID
		if key == "" {
			key = "#" + strconv.FormatInt(e.Index, 10)
		}
		it := calls[key]
		if it == nil {
			c := &Call{
				Drill:     ev.Surface == audit.SurfaceDrill,
				RequestID: ev.Action.RequestID, Channel: ev.Action.Channel, Operation: ev.Action.Operation,
				Target: ev.Action.Target, CredentialRef: ev.Action.CredentialRef, RequestedAt: ev.Time,
				State: CallRequested,
			}
			it = &Item{Kind: ItemCall, Index: e.Index, Time: ev.Time, Type: ev.Type, BootID: ev.BootID, VaultEpoch: ev.VaultEpoch, Call: c}
			calls[key] = it
			items = append(items, it)
		}
		refApplyCallEntry(it, e)
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

// applyCallEntry folds one entry into its call. States only move forward:
// a late or repeated entry cannot turn a result back into "dispatched".
func refApplyCallEntry(it *Item, e audit.Entry) {
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

// Sessions returns every session named in entries, newest approval first.
// entries must be in log order (as audit.ReadEvents yields them).
func refSessions(entries []audit.Entry) []Session {
	byID := map[string]*Session{}
	var order []*Session
	get := func(e audit.Entry) *Session {
		s := byID[e.Event.SessionID]
		if s == nil {
			s = &Session{ID: e.Event.SessionID, FirstIndex: e.Index}
			byID[s.ID] = s
			order = append(order, s)
		}
		s.LastIndex = e.Index
		return s
	}
	// end applies an inferred end to every session still open that ok accepts.
	end := func(e audit.Entry, reason audit.Reason, ok func(*Session) bool) {
		for _, s := range order {
			if !s.Ended && ok(s) {
				s.Ended, s.EndedAt, s.EndReason, s.EndInferred = true, e.Event.Time, reason, true
				s.LastIndex = e.Index
			}
		}
	}
	for _, e := range entries {
		ev := e.Event
		switch ev.Type {
		case audit.EventSessionApproved:
			if ev.SessionID == "" {
				continue
			}
			s := get(e)
			s.ApprovalID, s.BootID, s.VaultEpoch = ev.ApprovalID, ev.BootID, ev.VaultEpoch
			s.ApprovedAt, s.ApprovedBy, s.Surface = ev.Time, ev.ApprovedBy, ev.Surface
			if ev.Run != nil {
				run := *ev.Run
				s.Run = &run
			}
		case audit.EventSessionEnded:
			if ev.SessionID == "" {
				continue
			}
			s := get(e)
			// An explicit end wins over one inferred earlier.
			if !s.Ended || s.EndInferred {
				s.Ended, s.EndedAt, s.EndReason, s.EndInferred = true, ev.Time, ev.Reason, false
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
				get(e).Calls++
			}
		case audit.EventGatewayStarted:
			end(e, audit.ReasonGatewayRestarted, func(s *Session) bool { return s.BootID != ev.BootID })
		case audit.EventVaultLocked:
			end(e, audit.ReasonVaultLocked, func(*Session) bool { return true })
		case audit.EventVaultUnlocked:
			end(e, audit.ReasonVaultStateChanged, func(s *Session) bool { return s.VaultEpoch < ev.VaultEpoch })
		}
	}
	out := make([]Session, len(order))
	for i, s := range order {
		out[i] = *s
	}
	slices.Reverse(out)
	return out
}
