package app

import (
	"time"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/audit"
)

// AuditStatus is the audit log's state for the UI. State is "verifying"
// (the first verification since the app started is still running; the app
// records meanwhile), "intact", "tampered", "unreadable" or "absent" (no log
// yet: the vault is not set up).
type AuditStatus struct {
	State   string `json:"state" enum:"AuditState"`
	Writing bool   `json:"writing"` // the app holds the log open for appends
	// Problem is why the app is not recording (open refused, writes failed);
	// "" when it records normally. Shown in the banner.
	Problem    string   `json:"problem"`
	Entries    int64    `json:"entries"`
	TreeHead   string   `json:"treeHead"`
	SignedSize int64    `json:"signedSize"` // entries covered by the newest signed checkpoint
	FirstBad   int64    `json:"firstBad"`   // -1 unless tampered at a known entry
	Reason     string   `json:"reason"`     // why tampered or unreadable
	Torn       string   `json:"torn"`       // a torn tail, in words; "" if none
	Notes      []string `json:"notes"`
}

// LoggedSession is one session of the Sessions view.
type LoggedSession struct {
	ID          string `json:"id"`
	Executable  string `json:"executable"`
	PID         int    `json:"pid"`
	ExeSHA256   string `json:"exeSha256"`
	Signer      string `json:"signer"`
	BootID      string `json:"bootId"`
	VaultEpoch  uint64 `json:"vaultEpoch"`
	ApprovedAt  string `json:"approvedAt"` // RFC 3339, "" if not in the log
	ApprovedBy  string `json:"approvedBy"`
	Surface     string `json:"surface"`
	Ended       bool   `json:"ended"`
	EndedAt     string `json:"endedAt"`
	EndReason   string `json:"endReason"`
	EndInferred bool   `json:"endInferred"`
	Calls       int    `json:"calls"`
}

// SessionsView is one page of the Sessions view, newest first. Readable is
// false while the vault is locked (the log is encrypted to the vault's
// audit key); Note says why. More says older sessions exist; Next is the
// Before of the page that holds them.
type SessionsView struct {
	Readable bool            `json:"readable"`
	Note     string          `json:"note"`
	Sessions []LoggedSession `json:"sessions"`
	More     bool            `json:"more"`
	Next     int64           `json:"next"`
}

// PageRequest asks for one page, newest first: what comes before the log
// index Before (0: from the newest), at most Limit (0: 100, at most 1000).
type PageRequest struct {
	Before int64 `json:"before"`
	Limit  int   `json:"limit"`
}

// ActivityFilter narrows the Activity view; empty fields do not filter.
// From and To are RFC 3339 times. Before and Limit ask for a page, as in
// PageRequest.
type ActivityFilter struct {
	SessionID string `json:"sessionId"`
	Channel   string `json:"channel"`
	Class     string `json:"class"`
	From      string `json:"from"`
	To        string `json:"to"`
	Before    int64  `json:"before"`
	Limit     int    `json:"limit"`
}

// ActivityItem is one line of the Activity view: a call or an authority event.
type ActivityItem struct {
	Kind       string `json:"kind" enum:"ActivityKind"` // "call" or "authority"
	Index      int64  `json:"index"`
	Time       string `json:"time"`
	Type       string `json:"type"`
	SessionID  string `json:"sessionId"`
	Reason     string `json:"reason"`
	VaultEpoch uint64 `json:"vaultEpoch"`
	// Call fields, "" / 0 for authority events.
	RequestID  string `json:"requestId"`
	Channel    string `json:"channel"`
	Operation  string `json:"operation"`
	Target     string `json:"target"`
	State      string `json:"state"`
	Class      string `json:"class"`
	Status     int    `json:"status"`
	Bytes      int64  `json:"bytes"`
	DurationMS int64  `json:"durationMs"`
	// Path is a call's path (no query), CredentialRef the credential (or
	// OAuth authorization) it used: an id, never a value. Credential events
	// (credential_changed) name theirs there too, with CredentialName.
	Path           string `json:"path"`
	CredentialRef  string `json:"credentialRef"`
	CredentialName string `json:"credentialName"`
	// OAuth custody and drill events: the step, its outcome ("ok",
	// "failed" or ""), the error code, the authorization and the drill.
	Step            string `json:"step"`
	Outcome         string `json:"outcome"`
	Code            string `json:"code"`
	AuthorizationID string `json:"authorizationId"`
	DrillID         string `json:"drillId"`
	DrillKind       string `json:"drillKind"`
	// Drill: a call of Yett's own revocation drill client, not an agent's.
	Drill bool `json:"drill"`
}

// ActivityView is one page of the Activity view; see SessionsView.
type ActivityView struct {
	Readable bool           `json:"readable"`
	Note     string         `json:"note"`
	Items    []ActivityItem `json:"items"`
	More     bool           `json:"more"`
	Next     int64          `json:"next"`
}

// CheckpointExport says what ExportCheckpoint saved.
type CheckpointExport struct {
	Saved    bool   `json:"saved"` // false when the person cancelled
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	TreeHead string `json:"treeHead"`
}

func auditTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func loggedSessionView(s activity.Session) LoggedSession {
	v := LoggedSession{
		ID: s.ID, BootID: s.BootID, VaultEpoch: s.VaultEpoch, ApprovedAt: auditTime(s.ApprovedAt),
		ApprovedBy: s.ApprovedBy, Surface: s.Surface, Ended: s.Ended, EndedAt: auditTime(s.EndedAt),
		EndReason: string(s.EndReason), EndInferred: s.EndInferred, Calls: s.Calls,
	}
	if r := s.Run; r != nil {
		v.Executable, v.PID, v.ExeSHA256, v.Signer = r.Executable, r.PID, r.ExecutableHash, r.Signer
	}
	return v
}

func loggedActivityItem(it activity.Item) ActivityItem {
	v := ActivityItem{
		Kind: string(it.Kind), Index: it.Index, Time: auditTime(it.Time), Type: string(it.Type),
		SessionID: it.SessionID, Reason: string(it.Reason), VaultEpoch: it.VaultEpoch,
		Step: it.Detail.Step, Outcome: it.Detail.Outcome, Code: it.Detail.Code, AuthorizationID: it.Detail.AuthorizationID,
		DrillID: it.Detail.DrillID, DrillKind: it.Detail.DrillKind,
	}
	if d := it.Detail; d.Change != "" {
		// A person's change to the vault: what changed is its reason, and
		// what it changed is named (a credential by its id too).
		v.Reason, v.CredentialRef, v.CredentialName = d.Change, d.CredentialID, d.Subject
	}
	if c := it.Call; c != nil {
		v.Drill = c.Drill
		v.RequestID, v.Channel, v.Operation, v.Target, v.Path = c.RequestID, c.Channel, c.Operation, c.Target, c.Path
		v.CredentialRef = c.CredentialRef
		v.State, v.Class, v.Reason = string(c.State), string(c.Class), string(c.DenyReason)
		if r := c.Result; r != nil {
			v.Status, v.Bytes, v.DurationMS = r.Status, r.Bytes, r.DurationMS
		}
	}
	return v
}

// verifyingStatus is the status while the first verification runs: what the
// writer holds, nothing claimed yet.
func verifyingStatus(h audit.Head) AuditStatus {
	st := AuditStatus{State: "verifying", Entries: h.Size, FirstBad: -1, Notes: []string{}}
	if h.Size > 0 {
		st.TreeHead = h.String()
	}
	return st
}

func statusFromReport(rep audit.Report) AuditStatus {
	st := AuditStatus{State: rep.Status.String(), Entries: rep.Entries, FirstBad: rep.FirstBad, Notes: rep.Notes}
	if rep.Head.Size > 0 {
		st.TreeHead = rep.Head.String()
	}
	if rep.Checkpoint != nil {
		st.SignedSize = rep.Checkpoint.Size
	}
	if rep.Err != nil {
		st.Reason = rep.Err.Error()
	}
	if t := rep.Torn; t != nil {
		st.Torn = tornNote(t)
	}
	if st.Notes == nil {
		st.Notes = []string{}
	}
	return st
}
