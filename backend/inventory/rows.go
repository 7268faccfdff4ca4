package inventory

import (
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/store"
)

// Row is one authorization as the owner inventory shows it: what custody
// knows, what a person answers for, and what the audit log and the drills
// say. It holds no secret and no token.
type Row struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Name        string   `json:"name"`
	Provider    string   `json:"provider"`
	AccountRef  string   `json:"account_ref"`
	Scopes      []string `json:"scopes"`
	Environment string   `json:"environment"`
	// HeldOn says where the authorization is held: this machine, by name.
	HeldOn        string    `json:"held_on"`
	Owner         string    `json:"owner"`
	BackupRevoker string    `json:"backup_revoker"`
	CreatedVia    string    `json:"created_via"`
	ConnectedAt   time.Time `json:"connected_at"`
	// LastUsed is the last call that used it and got an answer, from the
	// audit log.
	LastUsed    time.Time `json:"last_used"`
	LastRefresh time.Time `json:"last_refresh"`
	ReviewBy    time.Time `json:"review_by"`
	// LastDrill is the latest drill's summary, nil before the first.
	LastDrill *DrillSummary `json:"last_drill"`
	// NextDrill is when the schedule drills it next (zero when it cannot
	// be drilled); DrillEveryDays and DrillKind are its schedule.
	NextDrill      time.Time `json:"next_drill"`
	DrillEveryDays int       `json:"drill_every_days"`
	DrillKind      string    `json:"drill_kind"`
	Drillable      bool      `json:"drillable"`
	Operations     []string  `json:"operations"`
	// DisableProcedure is what Yett does when the person presses Revoke.
	DisableProcedure string `json:"disable_procedure"`
	State            string `json:"state"`
	StateReason      string `json:"state_reason"`
	// Controlled is false when a required column is empty; Missing names
	// those columns.
	Controlled   bool     `json:"controlled"`
	Missing      []string `json:"missing"`
	ReviewDue    bool     `json:"review_due"`
	DrillOverdue bool     `json:"drill_overdue"`
	// Drilling: a drill of it is running now.
	Drilling bool `json:"drilling"`
}

// DrillSummary is a row's latest drill.
type DrillSummary struct {
	ID     string    `json:"id"`
	Kind   string    `json:"kind"`
	At     time.Time `json:"at"`
	Passed bool      `json:"passed"`
}

// Required columns, by the names the table shows and Missing uses.
const (
	ColProvider    = "provider"
	ColAccount     = "account"
	ColScopes      = "scopes"
	ColEnvironment = "environment"
	ColOwner       = "owner"
	ColBackup      = "backup revoker"
	ColCreatedVia  = "created via"
	ColConnectedAt = "connected at"
	ColReviewBy    = "review date"
)

// missing names the required columns r leaves empty. Last use, last
// refresh and last drill may be empty on a row under control: they say
// what happened, not who answers for it.
func missing(r *Row) []string {
	out := []string{}
	for _, c := range []struct {
		name  string
		empty bool
	}{
		{ColProvider, r.Provider == ""}, {ColAccount, r.AccountRef == ""}, {ColScopes, len(r.Scopes) == 0},
		{ColEnvironment, r.Environment == ""}, {ColOwner, r.Owner == ""}, {ColBackup, r.BackupRevoker == ""},
		{ColCreatedVia, r.CreatedVia == ""}, {ColConnectedAt, r.ConnectedAt.IsZero()}, {ColReviewBy, r.ReviewBy.IsZero()},
	} {
		if c.empty {
			out = append(out, c.name)
		}
	}
	return out
}

// State filters (Filter.State).
const (
	FilterUncontrolled      = "not_under_control"
	FilterDrillOverdue      = "drill_overdue"
	FilterReviewDue         = "review_due"
	FilterNeedsReconnection = "needs_reconnection"
	FilterSuspended         = "suspended"
	FilterRevoked           = "revoked"
)

// Filter narrows the table: Text matches any column's words, State one of
// the Filter* states; empty fields match everything.
type Filter struct {
	Text  string `json:"text"`
	State string `json:"state"`
}

// Matches says whether r passes f.
func (r *Row) Matches(f Filter) bool {
	switch f.State {
	case "":
	case FilterUncontrolled:
		if r.Controlled {
			return false
		}
	case FilterDrillOverdue:
		if !r.DrillOverdue {
			return false
		}
	case FilterReviewDue:
		if !r.ReviewDue {
			return false
		}
	case FilterNeedsReconnection:
		if r.State != "needs_reconnection" {
			return false
		}
	case FilterSuspended:
		if r.State != "suspended" {
			return false
		}
	case FilterRevoked:
		if r.State != "revoked" && r.State != "disabled" {
			return false
		}
	default:
		return false
	}
	text := strings.ToLower(strings.TrimSpace(f.Text))
	if text == "" {
		return true
	}
	hay := strings.ToLower(strings.Join(append([]string{r.ID, r.Name, r.Provider, r.AccountRef, r.Environment,
		r.Owner, r.BackupRevoker, r.CreatedVia, r.State, r.HeldOn}, append(r.Scopes, r.Operations...)...), "\x00"))
	for _, w := range strings.Fields(text) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// Rows lists the inventory, every row matching f, by name.
func (inv *Inventory) Rows(ctx context.Context, f Filter) ([]Row, error) {
	rows, err := inv.rows(ctx)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for i := range rows {
		if rows[i].Matches(f) {
			out = append(out, rows[i])
		}
	}
	return out, nil
}

// Row returns one row.
func (inv *Inventory) Row(ctx context.Context, id string) (Row, error) {
	rows, err := inv.rows(ctx)
	if err != nil {
		return Row{}, err
	}
	for _, r := range rows {
		if r.ID == id {
			return r, nil
		}
	}
	return Row{}, ErrNotFound
}

// facts lists every source's facts.
func (inv *Inventory) facts(ctx context.Context) ([]Fact, error) {
	var all []Fact
	for _, s := range inv.cfg.Sources {
		fs, err := s.Facts(ctx)
		if err != nil {
			return nil, err
		}
		if k, ok := s.(OwnerKeeper); ok {
			for i := range fs {
				if fs[i].OwnersHeld {
					fs[i].owners = k
				}
			}
		}
		all = append(all, fs...)
	}
	return all, nil
}

// rows builds every row: facts, records (made for rows seen the first
// time), the latest drills and the last uses.
func (inv *Inventory) rows(ctx context.Context) ([]Row, error) {
	facts, err := inv.facts(ctx)
	if err != nil {
		return nil, err
	}
	inv.catchUpUses()
	recs, err := inv.records(facts)
	if err != nil {
		return nil, err
	}
	last, err := inv.latestDrills()
	if err != nil {
		return nil, err
	}
	uses, err := inv.uses()
	if err != nil {
		return nil, err
	}
	inv.mu.Lock()
	running := make(map[string]bool, len(inv.running))
	for id := range inv.running {
		running[id] = true
	}
	inv.mu.Unlock()
	now := inv.now()
	out := make([]Row, 0, len(facts))
	control := make(map[string]bool, len(facts))
	for i := range facts {
		f := &facts[i]
		rec := recs[f.ID]
		r := Row{
			ID: f.ID, Kind: f.Kind, Name: f.Name, Provider: f.Provider, AccountRef: f.AccountRef, Scopes: f.Scopes,
			Environment: f.Environment, HeldOn: inv.held, Owner: rec.Owner, BackupRevoker: rec.BackupRevoker,
			CreatedVia: f.CreatedVia, ConnectedAt: utc(f.ConnectedAt), LastUsed: uses[f.ID], LastRefresh: utc(f.LastRefresh),
			ReviewBy: store.FromUnixSeconds(rec.ReviewBy), LastDrill: last[f.ID], Drillable: f.Drillable, Operations: f.Operations,
			DisableProcedure: f.Disable, State: f.State, StateReason: f.StateReason, Drilling: running[f.ID],
			DrillEveryDays: rec.DrillEveryDays, DrillKind: rec.DrillKind,
		}
		if f.Kind != KindOAuth {
			r.Environment = rec.Environment
		}
		if f.OwnersHeld {
			r.Owner, r.BackupRevoker = f.Declared.Owner, f.Declared.BackupRevoker
		}
		if r.Scopes == nil {
			r.Scopes = []string{}
		}
		if r.Operations == nil {
			r.Operations = []string{}
		}
		r.Missing = missing(&r)
		r.Controlled = len(r.Missing) == 0
		r.ReviewDue = !r.ReviewBy.IsZero() && !now.Before(r.ReviewBy)
		// A row that is revoked or disabled is drilled no more: nothing
		// is due until its owner reconnects it.
		if r.Drillable && live(r.State) {
			r.NextDrill = nextDrill(&r, rec)
			r.DrillOverdue = !now.Before(r.NextDrill)
		}
		control[r.ID] = r.Controlled
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Row) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	inv.control.Store(&control)
	return out, nil
}

// live: the authorization can serve, or is only switched off for now.
func live(state string) bool { return state == "active" || state == "suspended" }

// nextDrill is the last drill (or the connection) plus the schedule.
func nextDrill(r *Row, rec record) time.Time {
	from := r.ConnectedAt
	if r.LastDrill != nil && r.LastDrill.At.After(from) {
		from = r.LastDrill.At
	}
	return from.Add(time.Duration(rec.DrillEveryDays) * 24 * time.Hour)
}

// records returns the record of every fact, creating those seen for the
// first time: the owner declared when it was connected, and a review date
// 90 days after the connection unless one was declared.
func (inv *Inventory) records(facts []Fact) (map[string]record, error) {
	var all []record
	if err := inv.db.Find(&all).Error; err != nil {
		return nil, err
	}
	recs := make(map[string]record, len(all))
	for _, r := range all {
		recs[r.ID] = r
	}
	var fresh []record
	for _, f := range facts {
		if _, ok := recs[f.ID]; ok {
			continue
		}
		r := record{ID: f.ID, Kind: f.Kind, Owner: f.Declared.Owner, BackupRevoker: f.Declared.BackupRevoker,
			ReviewBy: store.UnixSeconds(f.Declared.ReviewBy), DrillEveryDays: DefaultDrillEveryDays, DrillKind: DrillUnattended,
			FirstSeen: inv.now().Unix()}
		if r.ReviewBy == 0 && !f.ConnectedAt.IsZero() {
			r.ReviewBy = f.ConnectedAt.Add(DefaultReviewAfter).Unix()
		}
		fresh = append(fresh, r)
		recs[f.ID] = r
	}
	if len(fresh) > 0 {
		err := inv.db.Transaction(func(tx *gorm.DB) error {
			for _, r := range fresh {
				// Another caller may have made it meanwhile: its record
				// stands.
				if err := tx.Exec(`INSERT INTO inventory_rows (id, kind, owner, backup_revoker, environment, review_by, review_notified,
					drill_every_days, drill_kind, drill_notified, first_seen) VALUES (?, ?, ?, ?, '', ?, 0, ?, ?, 0, ?) ON CONFLICT(id) DO NOTHING`,
					r.ID, r.Kind, r.Owner, r.BackupRevoker, r.ReviewBy, r.DrillEveryDays, r.DrillKind, r.FirstSeen).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// latestDrills returns each row's latest drill.
func (inv *Inventory) latestDrills() (map[string]*DrillSummary, error) {
	var rows []reportRow
	// Finish times are whole seconds: two drills of a row that end in the
	// same second are told apart by the order they were stored in (rowid).
	err := inv.db.Raw(`SELECT d.id, d.row_id, d.kind, d.finished_at, d.passed FROM drill_reports d
		WHERE d.rowid = (SELECT x.rowid FROM drill_reports x WHERE x.row_id = d.row_id ORDER BY x.finished_at DESC, x.rowid DESC LIMIT 1)`).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make(map[string]*DrillSummary, len(rows))
	for _, r := range rows {
		out[r.RowID] = &DrillSummary{ID: r.ID, Kind: r.Kind, At: store.FromUnixSeconds(r.FinishedAt), Passed: r.Passed}
	}
	return out, nil
}

// Blocked implements the gateway's Control: ref (a credential or an
// authorization) is not under control while the person blocks such rows.
// It answers from the last computed table, computed again when a source or
// a record changed since; a ref the inventory does not hold is blocked.
func (inv *Inventory) Blocked(ref string) bool {
	if !inv.block.Load() {
		return false
	}
	m := inv.control.Load()
	if m == nil || inv.dirty.Load() {
		inv.ctlMu.Lock()
		if m = inv.control.Load(); m == nil || inv.dirty.Load() {
			inv.dirty.Store(false)
			if _, err := inv.rows(inv.ctx); err != nil {
				inv.dirty.Store(true)
				inv.log.Warn("the inventory could not be computed; blocking", "err", err)
			}
			m = inv.control.Load()
		}
		inv.ctlMu.Unlock()
	}
	if m == nil {
		return true
	}
	controlled, ok := (*m)[ref]
	return !ok || !controlled
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
