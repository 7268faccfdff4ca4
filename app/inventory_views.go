package app

import (
	"github.com/yettdev/yett/backend/inventory"
)

// The inventory views are what frontend/src/lib/backend.ts parses:
// camelCase keys, times as RFC 3339 in UTC ("" for none), lists never
// null. They copy inventory rows and drill reports field by field; neither
// has a field that could hold a secret or a token.

// InventoryRowView is one row of the owner inventory.
type InventoryRowView struct {
	ID               string   `json:"id"`
	Kind             string   `json:"kind"`
	Name             string   `json:"name"`
	Provider         string   `json:"provider"`
	AccountRef       string   `json:"accountRef"`
	Scopes           []string `json:"scopes"`
	Environment      string   `json:"environment"`
	HeldOn           string   `json:"heldOn"`
	Owner            string   `json:"owner"`
	BackupRevoker    string   `json:"backupRevoker"`
	CreatedVia       string   `json:"createdVia"`
	ConnectedAt      string   `json:"connectedAt"`
	LastUsed         string   `json:"lastUsed"`
	LastRefresh      string   `json:"lastRefresh"`
	ReviewBy         string   `json:"reviewBy"`
	LastDrillID      string   `json:"lastDrillId"`
	LastDrillKind    string   `json:"lastDrillKind"`
	LastDrillAt      string   `json:"lastDrillAt"`
	LastDrillPassed  bool     `json:"lastDrillPassed"`
	NextDrill        string   `json:"nextDrill"`
	DrillEveryDays   int      `json:"drillEveryDays"`
	DrillKind        string   `json:"drillKind"`
	Drillable        bool     `json:"drillable"`
	Operations       []string `json:"operations"`
	DisableProcedure string   `json:"disableProcedure"`
	State            string   `json:"state"`
	StateReason      string   `json:"stateReason"`
	Controlled       bool     `json:"controlled"`
	Missing          []string `json:"missing"`
	ReviewDue        bool     `json:"reviewDue"`
	DrillOverdue     bool     `json:"drillOverdue"`
	Drilling         bool     `json:"drilling"`
}

// InventoryFilter is the table's filter, for exports: words to match and
// one state (not_under_control, drill_overdue, review_due,
// needs_reconnection, revoked), "" for any.
type InventoryFilter struct {
	Text  string `json:"text"`
	State string `json:"state" enum:"InventoryStateFilter"`
}

// InventorySettingsView are the inventory's switches.
type InventorySettingsView struct {
	BlockUncontrolled bool `json:"blockUncontrolled"`
}

// ExportResult says whether and where an export was saved.
type ExportResult struct {
	Saved bool   `json:"saved"`
	Path  string `json:"path"`
	Size  int    `json:"size"`
}

// DrillStepView is one step of a drill as it ran.
type DrillStepView struct {
	Name       string   `json:"name"`
	Title      string   `json:"title"`
	Passed     bool     `json:"passed"`
	Did        string   `json:"did"`
	Evidence   []string `json:"evidence"`
	StartedAt  string   `json:"startedAt"`
	DurationMS int64    `json:"durationMs"`
	AuditIndex int64    `json:"auditIndex"`
}

// DrillReportView is one drill's report, running or ended.
type DrillReportView struct {
	ID              string          `json:"id"`
	AuthorizationID string          `json:"authorizationId"`
	Name            string          `json:"name"`
	Provider        string          `json:"provider"`
	AccountRef      string          `json:"accountRef"`
	Kind            string          `json:"kind"`
	Trigger         string          `json:"trigger"`
	StartedAt       string          `json:"startedAt"`
	FinishedAt      string          `json:"finishedAt"`
	Running         bool            `json:"running"`
	Passed          bool            `json:"passed"`
	Steps           []DrillStepView `json:"steps"`
	NotExercised    []string        `json:"notExercised"`
	// NotChecked: what a step that passed could not verify, and why.
	NotChecked []string `json:"notChecked"`
	EndState   string   `json:"endState"`
	// Resumed: an unattended drill switched the authorization back on.
	Resumed bool   `json:"resumed"`
	Advice  string `json:"advice"`
}

func inventoryRowView(r inventory.Row) InventoryRowView {
	v := InventoryRowView{
		ID: r.ID, Kind: r.Kind, Name: r.Name, Provider: r.Provider, AccountRef: r.AccountRef, Scopes: nonNil(r.Scopes),
		Environment: r.Environment, HeldOn: r.HeldOn, Owner: r.Owner, BackupRevoker: r.BackupRevoker, CreatedVia: r.CreatedVia,
		ConnectedAt: rfc3339(r.ConnectedAt), LastUsed: rfc3339(r.LastUsed), LastRefresh: rfc3339(r.LastRefresh),
		ReviewBy: rfc3339(r.ReviewBy), NextDrill: rfc3339(r.NextDrill), DrillEveryDays: r.DrillEveryDays, DrillKind: r.DrillKind,
		Drillable: r.Drillable, Operations: nonNil(r.Operations), DisableProcedure: r.DisableProcedure, State: r.State,
		StateReason: r.StateReason, Controlled: r.Controlled, Missing: nonNil(r.Missing), ReviewDue: r.ReviewDue,
		DrillOverdue: r.DrillOverdue, Drilling: r.Drilling,
	}
	if d := r.LastDrill; d != nil {
		v.LastDrillID, v.LastDrillKind, v.LastDrillAt, v.LastDrillPassed = d.ID, d.Kind, rfc3339(d.At), d.Passed
	}
	return v
}

func drillReportView(r inventory.Report) DrillReportView {
	v := DrillReportView{
		ID: r.ID, AuthorizationID: r.AuthorizationID, Name: r.Name, Provider: r.Provider, AccountRef: r.AccountRef,
		Kind: r.Kind, Trigger: r.Trigger, StartedAt: rfc3339(r.StartedAt), FinishedAt: rfc3339(r.FinishedAt),
		Running: r.Running, Passed: r.Passed, Steps: make([]DrillStepView, 0, len(r.Steps)),
		NotExercised: nonNil(r.NotExercised), NotChecked: nonNil(r.NotChecked), EndState: r.EndState, Resumed: r.Resumed, Advice: r.Advice,
	}
	for _, st := range r.Steps {
		v.Steps = append(v.Steps, DrillStepView{
			Name: st.Name, Title: st.Title, Passed: st.Passed, Did: st.Did, Evidence: nonNil(st.Evidence),
			StartedAt: rfc3339(st.StartedAt), DurationMS: st.DurationMS, AuditIndex: st.AuditIndex,
		})
	}
	return v
}
