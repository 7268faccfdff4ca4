package activity

import (
	"slices"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// Session is one approved agent run as the log tells it.
type Session struct {
	ID         string
	ApprovalID string
	Run        *audit.RunBinding // the process identity the approval was bound to; nil if the approval is not in the log
	BootID     string
	VaultEpoch uint64
	ApprovedAt time.Time // zero if the approval is not in the log
	ApprovedBy string
	Surface    string // "app", "notification"

	Ended     bool
	EndedAt   time.Time
	EndReason audit.Reason
	// EndInferred: no session_ended entry; the end follows from a later
	// entry (a gateway start with another boot id, a vault lock or unlock).
	EndInferred bool

	Calls      int   // action_requested entries in this session
	FirstIndex int64 // log index of the first entry naming this session
	LastIndex  int64 // log index of the last entry naming or ending it
}

// Sessions returns every session named in entries, newest approval first.
// entries must be in log order (as audit.ReadEvents yields them).
func Sessions(entries []audit.Entry) []Session {
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
