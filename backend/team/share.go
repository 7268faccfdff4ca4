package team

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
)

// What each kind of record carries to the team database, as queued in the
// outbox (signed by the machine when queued). A record is built from what
// the machine shows its person already (the inventory's rows and
// reports, the audit log's checkpoints), and no part of it is a secret.

// sharedRow is one inventory row: its columns the lead's view filters on,
// and the row itself as the inventory exports it (RowJSON).
type sharedRow struct {
	RowID           string          `json:"row_id"`
	Deleted         bool            `json:"deleted"`
	Kind            string          `json:"kind"`
	Name            string          `json:"name"`
	Provider        string          `json:"provider"`
	AccountRef      string          `json:"account_ref"`
	Environment     string          `json:"environment"`
	Owner           string          `json:"owner"`
	BackupRevoker   string          `json:"backup_revoker"`
	State           string          `json:"state"`
	Controlled      bool            `json:"controlled"`
	ReviewBy        *time.Time      `json:"review_by"`
	NextDrill       *time.Time      `json:"next_drill"`
	DrillEveryDays  int             `json:"drill_every_days"`
	DrillKind       string          `json:"drill_kind"`
	LastDrillAt     *time.Time      `json:"last_drill_at"`
	LastDrillPassed *bool           `json:"last_drill_passed"`
	RowJSON         json.RawMessage `json:"row_json"`
	Signature       string          `json:"signature"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// rowRecord is what row r shares. Drilling says only that a drill runs
// this moment, and is left out: it would queue the row twice per drill.
func rowRecord(r inventory.Row) (sharedRow, error) {
	r.Drilling = false
	body, err := json.Marshal(r)
	if err != nil {
		return sharedRow{}, err
	}
	s := sharedRow{RowID: r.ID, Kind: r.Kind, Name: r.Name, Provider: r.Provider, AccountRef: r.AccountRef, Environment: r.Environment,
		Owner: r.Owner, BackupRevoker: r.BackupRevoker, State: r.State, Controlled: r.Controlled, ReviewBy: optTime(r.ReviewBy),
		NextDrill: optTime(r.NextDrill), DrillEveryDays: r.DrillEveryDays, DrillKind: r.DrillKind, RowJSON: body}
	if r.LastDrill != nil {
		s.LastDrillAt, s.LastDrillPassed = optTime(r.LastDrill.At), &r.LastDrill.Passed
	}
	return s, nil
}

// tombstone is what a row the machine no longer holds shares: it stays in
// the team's table, marked deleted, for the record.
func tombstone(id string) sharedRow {
	return sharedRow{RowID: id, Deleted: true, RowJSON: json.RawMessage(`{}`)}
}

func (s *sharedRow) sign(k *SigningKey, team, machine string) {
	s.Signature = k.sign(team, domainRow, machine, s.RowID, strconv.FormatBool(s.Deleted), string(s.RowJSON))
}

// sharedStep is a drill step with a digest of each line of its evidence
// in place of the line: evidence names sessions, processes and provider
// answers of this machine, which stay here; the digest lets the lead
// check a report this machine shows later against what it shared.
type sharedStep struct {
	Name            string    `json:"name"`
	Title           string    `json:"title"`
	Passed          bool      `json:"passed"`
	Did             string    `json:"did"`
	EvidenceDigests []string  `json:"evidence_sha256"`
	StartedAt       time.Time `json:"started_at"`
	DurationMS      int64     `json:"duration_ms"`
	AuditIndex      int64     `json:"audit_index"`
}

// sharedReport is a drill report as the team sees it.
type sharedReport struct {
	ID              string       `json:"id"`
	AuthorizationID string       `json:"authorization_id"`
	Name            string       `json:"name"`
	Provider        string       `json:"provider"`
	Kind            string       `json:"kind"`
	Trigger         string       `json:"trigger"`
	StartedAt       time.Time    `json:"started_at"`
	FinishedAt      time.Time    `json:"finished_at"`
	Passed          bool         `json:"passed"`
	Steps           []sharedStep `json:"steps"`
	NotExercised    []string     `json:"not_exercised"`
	NotChecked      []string     `json:"not_checked"`
	EndState        string       `json:"end_state"`
	Resumed         bool         `json:"resumed"`
}

// sharedDrill is one report as queued.
type sharedDrill struct {
	Report    json.RawMessage `json:"report"`
	Signature string          `json:"signature"`
}

func evidenceDigest(line string) string {
	sum := sha256.Sum256([]byte(line))
	return hex.EncodeToString(sum[:])
}

func drillRecord(r inventory.Report) (sharedDrill, error) {
	out := sharedReport{ID: r.ID, AuthorizationID: r.AuthorizationID, Name: r.Name, Provider: r.Provider, Kind: r.Kind, Trigger: r.Trigger,
		StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt.UTC(), Passed: r.Passed, Steps: []sharedStep{},
		NotExercised: r.NotExercised, NotChecked: r.NotChecked, EndState: r.EndState, Resumed: r.Resumed}
	for _, st := range r.Steps {
		ds := make([]string, 0, len(st.Evidence))
		for _, e := range st.Evidence {
			ds = append(ds, evidenceDigest(e))
		}
		out.Steps = append(out.Steps, sharedStep{Name: st.Name, Title: st.Title, Passed: st.Passed, Did: st.Did, EvidenceDigests: ds,
			StartedAt: st.StartedAt.UTC(), DurationMS: st.DurationMS, AuditIndex: st.AuditIndex})
	}
	body, err := json.Marshal(out)
	return sharedDrill{Report: body}, err
}

func (d *sharedDrill) sign(k *SigningKey, team, machine string) {
	d.Signature = k.sign(team, domainDrill, machine, string(d.Report))
}

// sharedCheckpoint is one signed checkpoint of the machine's audit log.
type sharedCheckpoint struct {
	LogID       string `json:"log_id"`
	Size        int64  `json:"size"`
	Root        string `json:"root"`
	VerifierKey string `json:"verifier_key"`
	Checkpoint  string `json:"checkpoint"`
	Signature   string `json:"signature"`
}

func checkpointRecord(cp audit.Checkpoint) sharedCheckpoint {
	return sharedCheckpoint{LogID: hex.EncodeToString(cp.LogID[:]), Size: cp.Size, Root: base64.StdEncoding.EncodeToString(cp.Root[:]),
		VerifierKey: cp.VerifierKey, Checkpoint: string(cp.Text)}
}

func (c *sharedCheckpoint) key() string { return c.LogID + ":" + strconv.FormatInt(c.Size, 10) }

func (c *sharedCheckpoint) sign(k *SigningKey, team, machine string) {
	c.Signature = k.sign(team, domainCheckpoint, machine, c.LogID, strconv.FormatInt(c.Size, 10), c.Checkpoint)
}

// sharedCosignature is a checkpoint as a witness cosigned it: the whole
// note (the log's signature and the witness's), named by the witness.
type sharedCosignature struct {
	LogID       string `json:"log_id"`
	Size        int64  `json:"size"`
	Witness     string `json:"witness"`
	Cosignature string `json:"cosignature"`
	Signature   string `json:"signature"`
}

func (c *sharedCosignature) key() string {
	return c.LogID + ":" + strconv.FormatInt(c.Size, 10) + ":" + c.Witness
}

func (c *sharedCosignature) sign(k *SigningKey, team, machine string) {
	c.Signature = k.sign(team, domainCosign, machine, c.LogID, strconv.FormatInt(c.Size, 10), c.Witness, c.Cosignature)
}

// cosignatureRecords reads a cosigned checkpoint (what the witness client
// hands on): the checkpoint with the log's own signature (checked with
// the key it names) and one record per other signature, named by its
// key's name. The lead checks those against the witness keys it trusts;
// this machine only relays them.
func cosignatureRecords(cosigned []byte) ([]sharedCosignature, error) {
	i := bytes.Index(cosigned, []byte("\n\n"))
	if i < 0 || len(cosigned) > 64<<10 {
		return nil, errors.New("team: not a signed note")
	}
	body, sigs := cosigned[:i+1], cosigned[i+2:]
	var cp *audit.Checkpoint
	var witnesses []string
	for _, line := range bytes.SplitAfter(sigs, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if c, err := audit.ParseCheckpoint(slices.Concat(body, []byte("\n"), line)); err == nil && cp == nil {
			cp = &c
			continue
		}
		rest, ok := bytes.CutPrefix(line, []byte("\u2014 "))
		name, _, _ := bytes.Cut(rest, []byte(" "))
		if !ok || len(name) == 0 || len(name) > 256 {
			return nil, errors.New("team: a signature line does not read")
		}
		witnesses = append(witnesses, string(name))
	}
	if cp == nil {
		return nil, errors.New("team: the note holds no checkpoint signed by its log")
	}
	if len(witnesses) == 0 {
		return nil, errors.New("team: the checkpoint carries no cosignature")
	}
	out := make([]sharedCosignature, 0, len(witnesses))
	for _, w := range witnesses {
		out = append(out, sharedCosignature{LogID: hex.EncodeToString(cp.LogID[:]), Size: cp.Size, Witness: w, Cosignature: string(cosigned)})
	}
	return out, nil
}
