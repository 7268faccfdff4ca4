package activity

import (
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

// Sessions returns every session named in entries, newest first (by the
// first entry naming each). entries must be in log order (as
// audit.ReadEvents yields them). It is the whole of what an Index built from
// the same entries shows, page after page.
func Sessions(entries []audit.Entry) []Session {
	x := NewIndex()
	for _, e := range entries {
		x.Add(e)
	}
	out := []Session{}
	for p := (Page{Limit: MaxPageSize}); ; {
		page := x.Sessions(p)
		out = append(out, page.Sessions...)
		if !page.More {
			return out
		}
		p.Before = page.Next
	}
}
