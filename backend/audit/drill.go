package audit

// The owner inventory and its revocation drills (backend/inventory). A
// drill is recorded as it runs: drill_started, one drill_step per step
// (event.go) with what it observed, and drill_finished with the verdict,
// each carrying DrillFacts and the authorization's id. A person's edit of
// an inventory row is inventory_edited with InventoryEdit.
const (
	EventDrillStarted    EventType = "drill_started"
	EventDrillFinished   EventType = "drill_finished"
	EventInventoryEdited EventType = "inventory_edited"
)

func init() {
	for _, t := range []EventType{EventDrillStarted, EventDrillFinished, EventInventoryEdited} {
		knownTypes[t] = true
	}
}

// SurfaceDrill is the surface of the entries of a revocation drill's own
// client (its refused calls), so a reader tells them from agents'.
const SurfaceDrill = "drill"

// Reasons of the inventory and its drills.
const (
	// ReasonDrillStopped: Yett's own drill client's call passed every
	// check before approval and stopped there, as a drill's call always
	// does; nothing was sent.
	ReasonDrillStopped Reason = "drill_stopped_before_approval"
	// ReasonAuthorizationSuspended: the authorization behind an operation
	// is switched off locally for now (an unattended drill, or a failed one
	// that left it so); its tokens are kept.
	ReasonAuthorizationSuspended Reason = "authorization_suspended"
)

// DrillFacts describe one revocation drill event: which drill, which step,
// what it observed and how long it took. Success (on the Event) says
// whether the step or the drill passed. Never a token.
type DrillFacts struct {
	DrillID string `json:"drill_id"`
	Kind    string `json:"kind"`              // full, unattended
	Trigger string `json:"trigger,omitempty"` // person, schedule
	Step    string `json:"step,omitempty"`    // drill_step: the step's name
	// Evidence is what the step observed, in words: HTTP statuses from the
	// provider, introspection answers, the refused call's code, audit
	// entry indexes, sessions and processes.
	Evidence   string `json:"evidence,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// InventoryEdit describes a person's edit of an inventory row (the row is
// the event's AuthorizationID: an authorization or a credential id) or of
// the inventory's settings: which field and its new value. Values are
// names and dates, never a secret.
type InventoryEdit struct {
	Field string `json:"field"` // owner, backup_revoker, environment, review_by, drill_every_days, drill_kind, block_uncontrolled
	Value string `json:"value"`
}

func (e *Event) drillFields(c *fieldCheck) {
	if d := e.Drill; d != nil {
		c.f("drill.drill_id", d.DrillID)
		c.f("drill.kind", d.Kind)
		c.f("drill.trigger", d.Trigger)
		c.f("drill.step", d.Step)
		c.f("drill.evidence", d.Evidence)
	}
	if i := e.Inventory; i != nil {
		c.f("inventory.field", i.Field)
		c.f("inventory.value", i.Value)
	}
}
