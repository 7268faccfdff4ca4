package inventory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/vault"
)

// Drill kinds.
const (
	// DrillFull cuts the authorization off for good (seed 002's drill).
	DrillFull = "full"
	// DrillUnattended is safe on a schedule with nobody present.
	DrillUnattended = "unattended"
)

// Triggers: who started a drill.
const (
	TriggerPerson   = "person"
	TriggerSchedule = "schedule"
)

// Step names, in the order a drill runs them.
const (
	StepLocalDisable       = "local_disable"
	StepProviderRevocation = "provider_revocation"
	StepCallRefused        = "call_refused"
	StepStaysRefused       = "stays_refused"
	StepAuditNamesUsers    = "audit_names_users"
	StepRevocationEndpoint = "revocation_endpoint"
	StepRefreshTokenKept   = "refresh_token_kept"
	StepReEnable           = "re_enable"
	StepCallPasses         = "call_passes"
)

// Custody is what a drill asks of OAuth custody (*oauth.Custody satisfies
// it). Nothing here returns a token.
type Custody interface {
	Check(id string) (oauth.Binding, error)
	Disable(ctx context.Context, id string) error
	RevokeAtProvider(ctx context.Context, id string) (oauth.RevokeReport, error)
	Suspend(ctx context.Context, id, why string) error
	Resume(ctx context.Context, id string) error
	ProbeRevocation(ctx context.Context, id string) (oauth.RevocationProbe, error)
	CheckRefreshToken(ctx context.Context, id string) (oauth.RefreshCheck, error)
	Authorization(id string) (oauth.AuthorizationView, error)
}

// Bindings is the vault's binding decision (*vault.Credentials satisfies it):
// the credential an http.request to a URL would carry.
type Bindings interface {
	For(t target.URL) (vault.CredentialView, error)
}

// Step is one step of a drill as it ran.
type Step struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Passed, or the drill stopped here.
	Passed bool `json:"passed"`
	// Did says what the step did; Evidence what it observed: HTTP statuses
	// from the provider, introspection answers, the refused call's code,
	// audit entry indexes, sessions and processes.
	Did        string    `json:"did"`
	Evidence   []string  `json:"evidence"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
	// AuditIndex is the index of the step's drill_step entry.
	AuditIndex int64 `json:"audit_index"`
}

// Report is one drill, as it runs and once it ended. It holds no token.
type Report struct {
	ID              string    `json:"id"`
	AuthorizationID string    `json:"authorization_id"`
	Name            string    `json:"name"`
	Provider        string    `json:"provider"`
	AccountRef      string    `json:"account_ref"`
	Kind            string    `json:"kind"`
	Trigger         string    `json:"trigger"`
	StartedAt       time.Time `json:"started_at"`
	FinishedAt      time.Time `json:"finished_at"`
	Running         bool      `json:"running"`
	Passed          bool      `json:"passed"`
	Steps           []Step    `json:"steps"`
	// NotExercised names the full drill's steps this drill did not
	// exercise, and why (an unattended drill's report says so plainly).
	NotExercised []string `json:"not_exercised"`
	// NotChecked names what a step that passed could not verify, and why
	// (a revocation the provider accepted with no introspection to ask
	// afterwards, a refresh token no introspection could be asked about).
	NotChecked []string `json:"not_checked"`
	// EndState is the authorization's state when the drill ended (custody's
	// own, as Connections and the Inventory show it); Resumed says an
	// unattended drill switched it back on, after its steps or after a
	// failure. Advice says what its owner should do now.
	EndState string `json:"end_state"`
	Resumed  bool   `json:"resumed"`
	Advice   string `json:"advice"`
}

// drill is one drill in progress.
type drill struct {
	inv     *Inventory
	rep     *Report
	fact    Fact
	client  *drillClient
	self    int // this process's pid: the drill client's calls are recorded under it
	stopped string
	// suspended: this drill switched the authorization off (unattended).
	suspended bool
	// notChecked collects Report.NotChecked.
	notChecked []string
	// plan is the drill's steps, in order.
	plan []stepDef
}

// stepFunc runs one step: it returns whether it passed, what it did and
// what it saw, and on failure what the owner should do.
type stepFunc func(ctx context.Context, d *drill) (passed bool, did string, evidence []string, advice string)

type stepDef struct {
	name, title string
	run         stepFunc
}

// RunDrill runs a drill of kind on authorization id and returns its
// report (also stored, published step by step, and recorded in the audit
// log). A full drill takes an active or suspended authorization and ends
// with it revoked; an unattended one takes an active one and ends with it
// active again when every step passed. A failed step stops the drill where
// it is safe: the authorization locally disabled, never half re-enabled.
// Errors (nothing ran): ErrNotFound, ErrNotDrillable, ErrDrillRunning,
// ErrInvalid for an unknown kind, ErrConfig without custody.
func (inv *Inventory) RunDrill(ctx context.Context, id, kind, trigger string) (Report, error) {
	if inv.cfg.Custody == nil {
		return Report{}, ErrConfig
	}
	var steps []stepDef
	switch kind {
	case DrillFull:
		steps = fullSteps
	case DrillUnattended:
		steps = unattendedSteps
	default:
		return Report{}, fmt.Errorf("%w: a drill is full or unattended", ErrInvalid)
	}
	f, err := inv.fact(ctx, id)
	if err != nil {
		return Report{}, err
	}
	if !f.Drillable || f.State != "active" && !(kind == DrillFull && f.State == "suspended") {
		return Report{}, ErrNotDrillable
	}
	rep := &Report{ID: newDrillID(), AuthorizationID: id, Name: f.Name, Provider: f.Provider, AccountRef: f.AccountRef,
		Kind: kind, Trigger: trigger, StartedAt: inv.now().UTC(), Running: true, Steps: []Step{}, NotExercised: []string{}, NotChecked: []string{}}
	inv.mu.Lock()
	if inv.running[id] != nil {
		inv.mu.Unlock()
		return Report{}, ErrDrillRunning
	}
	inv.running[id] = rep
	inv.mu.Unlock()
	defer func() {
		inv.mu.Lock()
		delete(inv.running, id)
		inv.mu.Unlock()
		inv.changes.Publish(Change{Row: id})
	}()
	// A drill is not abandoned half way because its caller went away: it
	// stops only when the inventory closes, and then where it is safe.
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(inv.ctx, cancel)()

	d := &drill{inv: inv, rep: rep, fact: f, self: selfPID(), plan: steps}
	defer func() { d.client.close() }()
	inv.record(dctx, audit.Event{Type: audit.EventDrillStarted, AuthorizationID: id,
		Drill: &audit.DrillFacts{DrillID: rep.ID, Kind: kind, Trigger: trigger}})
	inv.publish(rep)
	rep.Passed = true
	for _, s := range steps {
		start := inv.now()
		passed, did, evidence, advice := s.run(dctx, d)
		st := Step{Name: s.name, Title: s.title, Passed: passed, Did: did, Evidence: evidence,
			StartedAt: start.UTC(), DurationMS: inv.now().Sub(start).Milliseconds()}
		if st.Evidence == nil {
			st.Evidence = []string{}
		}
		st.AuditIndex, _ = inv.record(dctx, audit.Event{Type: audit.EventDrillStep, AuthorizationID: id, Success: &st.Passed,
			Drill: &audit.DrillFacts{DrillID: rep.ID, Kind: kind, Trigger: trigger, Step: s.name,
				Evidence: clip(strings.Join(st.Evidence, "; "), 1000), DurationMS: st.DurationMS}})
		rep.Steps = append(rep.Steps, st)
		if !passed {
			rep.Passed, rep.Advice = false, advice
			d.stopped = s.name
			break
		}
		inv.publish(rep)
	}
	d.finish(dctx)
	rep.Running, rep.FinishedAt = false, inv.now().UTC()
	if _, err := inv.storeReport(rep); err != nil {
		inv.log.Error("a drill report could not be stored", "drill", rep.ID, "err", err)
	}
	inv.record(dctx, audit.Event{Type: audit.EventDrillFinished, AuthorizationID: id, Success: &rep.Passed,
		Drill: &audit.DrillFacts{DrillID: rep.ID, Kind: kind, Trigger: trigger, Step: d.stopped,
			Evidence: clip("ended "+rep.EndState+"; "+rep.Advice, 1000), DurationMS: rep.FinishedAt.Sub(rep.StartedAt).Milliseconds()}})
	if !rep.Passed && inv.cfg.Notifier != nil {
		inv.cfg.Notifier.Remind(Reminder{Kind: ReminderDrillFailed, RowID: id, Title: "A revocation drill failed: " + rep.Name,
			Body: rep.Advice})
	}
	inv.publish(rep)
	return *rep, nil
}

// finish says what state the drill left the authorization in and what its
// owner does now. An unattended drill never leaves the grant worse than it
// found it: when a step failed after it switched the authorization off,
// it switches it back on, and the report says what it could not check.
func (d *drill) finish(ctx context.Context) {
	rep, c := d.rep, d.inv.cfg.Custody
	id := rep.AuthorizationID
	resumeFailed := ""
	if !rep.Passed && rep.Kind == DrillUnattended && d.suspended && !rep.Resumed {
		if v, err := c.Authorization(id); err == nil && v.State == oauth.StateSuspended {
			if err := c.Resume(ctx, id); err != nil {
				d.inv.log.Error("a failed unattended drill could not switch the authorization back on", "authorization", id)
				resumeFailed = err.Error()
			} else {
				rep.Resumed = true
			}
		}
	}
	rep.EndState = "unknown"
	if v, err := c.Authorization(id); err == nil {
		rep.EndState = v.State
	}
	// A drill that stopped did not run its later steps: they are not
	// checked either, and the report says which.
	if i := slices.IndexFunc(d.plan, func(s stepDef) bool { return s.name == d.stopped }); i >= 0 {
		var left []string
		for _, l := range d.plan[i+1:] {
			left = append(left, "“"+l.title+"”")
		}
		if len(left) > 0 {
			d.notChecked = append(d.notChecked, "the steps after the one that failed did not run: "+strings.Join(left, ", "))
		}
	}
	rep.NotChecked = append(rep.NotChecked[:0], d.notChecked...)
	if rep.Kind == DrillUnattended {
		rep.NotExercised = d.notExercised()
	}
	switch {
	case rep.Passed && rep.Kind == DrillFull:
		rep.Advice = "Every step passed. The authorization is revoked; its owner reconnects it from Connections when it is needed again."
	case rep.Passed:
		rep.Advice = "Every step passed and the authorization serves again. Run a full drill to prove the provider revokes its tokens."
	case rep.Kind == DrillUnattended && rep.Resumed:
		rep.Advice = "The drill stopped at “" + d.stoppedTitle() + "”, and Yett switched the authorization back on: it serves as it did before the drill. " + rep.Advice
	case rep.Kind == DrillUnattended && resumeFailed != "":
		rep.Advice = "The drill stopped at “" + d.stoppedTitle() + "”, and Yett could not switch the authorization back on (" + resumeFailed + "): use Switch back on in the Inventory. " + rep.Advice
	case rep.Advice == "":
		rep.Advice = "The drill stopped; the authorization stays switched off in Yett. Its owner looks at the failed step."
	}
	if len(rep.NotChecked) > 0 {
		rep.Advice += " Not checked: " + strings.Join(rep.NotChecked, "; ") + "."
	}
	rep.Advice = strings.TrimSpace(rep.Advice)
}

func (d *drill) stoppedTitle() string {
	for _, s := range d.rep.Steps {
		if s.Name == d.stopped {
			return s.Title
		}
	}
	return d.stopped
}

func (d *drill) notExercised() []string {
	probe := "a token the provider never issued"
	if d.fact.CreatedVia == oauth.FlowClientCredentials {
		probe = "a fresh access token of a grant of its own"
	}
	return []string{
		"Step 2, the provider's revocation of the refresh and access tokens in service: a provider may end the whole grant when any of its tokens is revoked (RFC 7009 §2.1 allows it; Ory Hydra does), which would break the integration, so this drill revoked only " + probe + ".",
		"Step 4, that the authorization stays refused until a person reconnects it: an unattended drill ends with it as it found it.",
		"A call sent to the API: the drill client's calls stop before approval, so nothing was sent to the provider or the API.",
	}
}

func (inv *Inventory) publish(rep *Report) {
	cp := *rep
	cp.Steps = append([]Step(nil), rep.Steps...)
	inv.changes.Publish(Change{Row: rep.AuthorizationID, Drill: &cp})
}

// storeReport keeps a finished report.
func (inv *Inventory) storeReport(rep *Report) (string, error) {
	b, err := json.Marshal(rep)
	if err != nil {
		return "", err
	}
	return rep.ID, inv.db.Exec(`INSERT INTO drill_reports (id, row_id, kind, trigger, started_at, finished_at, passed, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		rep.ID, rep.AuthorizationID, rep.Kind, rep.Trigger, rep.StartedAt.Unix(), rep.FinishedAt.Unix(), rep.Passed, string(b)).Error
}

// Drills lists authorization id's drill reports, newest first ("" for
// every authorization's), at most limit (0: 50). Reports that ended in the
// same second come in the order they were stored.
func (inv *Inventory) Drills(id string, limit int) ([]Report, error) {
	if limit <= 0 {
		limit = 50
	}
	q := inv.db.Model(&reportRow{}).Order("finished_at DESC, rowid DESC").Limit(limit)
	if id != "" {
		q = q.Where("row_id = ?", id)
	}
	var rows []reportRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	out := make([]Report, 0, len(rows))
	for _, r := range rows {
		var rep Report
		if err := json.Unmarshal([]byte(r.Report), &rep); err != nil {
			return nil, fmt.Errorf("inventory: drill report %s: %w", r.ID, err)
		}
		out = append(out, rep)
	}
	return out, nil
}

// Drill returns one drill's report: a running one as it is now.
func (inv *Inventory) Drill(drillID string) (Report, error) {
	inv.mu.Lock()
	for _, r := range inv.running {
		if r.ID == drillID {
			cp := *r
			cp.Steps = append([]Step(nil), r.Steps...)
			inv.mu.Unlock()
			return cp, nil
		}
	}
	inv.mu.Unlock()
	var raw string
	if err := inv.db.Raw(`SELECT report FROM drill_reports WHERE id = ?`, drillID).Scan(&raw).Error; err != nil {
		return Report{}, fmt.Errorf("inventory: %w", err)
	}
	if raw == "" {
		return Report{}, ErrNotFound
	}
	var rep Report
	err := json.Unmarshal([]byte(raw), &rep)
	return rep, err
}

// ExportDrill returns one drill's report as indented JSON.
func (inv *Inventory) ExportDrill(drillID string) ([]byte, error) {
	rep, err := inv.Drill(drillID)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(rep, "", "  ")
}

func newDrillID() string {
	b := make([]byte, 9)
	rand.Read(b)
	return "dr-" + hex.EncodeToString(b)
}
