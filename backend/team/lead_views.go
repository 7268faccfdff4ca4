package team

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/inventory"
)

// cursor is where a page of rows ended.
type cursor struct {
	Name    string `json:"n"`
	Machine string `json:"m"`
	Row     string `json:"r"`
}

func (c cursor) String() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 4096 || json.Unmarshal(b, &c) != nil {
		return cursor{}, fmt.Errorf("%w: not a page cursor", ErrInvalid)
	}
	return c, nil
}

// RequestView is a revocation request as the lead follows it.
type RequestView struct {
	ID          int64     `json:"id"`
	UID         string    `json:"uid"`
	Machine     string    `json:"machine"`
	Hostname    string    `json:"hostname"`
	Member      string    `json:"member"`
	RowID       string    `json:"row_id"`
	RowName     string    `json:"row_name"`
	Reason      string    `json:"reason"`
	RequestedBy string    `json:"requested_by"`
	RequestedAt time.Time `json:"requested_at"`
	Status      string    `json:"status"`
	// Outcome is the machine's evidence once it answered; Verified says
	// the answer carries the machine's signature.
	Outcome    *Outcome   `json:"outcome"`
	AnsweredAt *time.Time `json:"answered_at"`
	Verified   bool       `json:"verified"`
	// Waiting says, while it is pending, where and since when, and who
	// else can cut the authorization off: "pending at mia-desktop since
	// 2026-03-02 10:04 UTC; backup revoker: bob".
	Waiting string `json:"waiting"`
}

// Requests lists the revocation requests, newest first.
func (l *Lead) Requests(ctx context.Context) ([]RequestView, error) {
	return l.requests(ctx, "true")
}

func (l *Lead) requests(ctx context.Context, where string, args ...any) ([]RequestView, error) {
	rows, err := l.c.Query(ctx, `SELECT q.id, q.request_uid, q.machine_id, m.hostname, m.member, m.public_key, q.row_id, coalesce(r.name, ''),
		coalesce(r.backup_revoker, ''), q.reason, q.requested_by, q.requested_at, q.status, q.outcome_json, q.answered_at, coalesce(q.answer_signature, '')
		FROM team_revocation_requests q JOIN team_machines m ON m.machine_id = q.machine_id
		LEFT JOIN team_rows r ON r.machine_id = q.machine_id AND r.row_id = q.row_id
		WHERE `+where+` ORDER BY q.id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (RequestView, error) {
		var v RequestView
		var key, backup, sig string
		var outcome *string
		if err := row.Scan(&v.ID, &v.UID, &v.Machine, &v.Hostname, &v.Member, &key, &v.RowID, &v.RowName, &backup, &v.Reason,
			&v.RequestedBy, &v.RequestedAt, &v.Status, &outcome, &v.AnsweredAt, &sig); err != nil {
			return v, err
		}
		if outcome != nil {
			var o Outcome
			if json.Unmarshal([]byte(*outcome), &o) == nil {
				v.Outcome = &o
			}
			v.Verified = verify(key, sig, l.creds.TeamID, domainAnswer, v.Machine, v.UID, v.Status, *outcome)
		}
		if v.Status == StatusPending {
			v.Waiting = "pending at " + v.Hostname + " since " + v.RequestedAt.UTC().Format("2006-01-02 15:04 UTC")
			if backup != "" {
				v.Waiting += "; backup revoker: " + backup
			} else {
				v.Waiting += "; the row names no backup revoker"
			}
		}
		return v, nil
	})
}

// CheckpointView is a machine's newest published checkpoint and the
// newest one a witness cosigned.
type CheckpointView struct {
	Machine  string `json:"machine"`
	Hostname string `json:"hostname"`
	LogID    string `json:"log_id"`
	Size     int64  `json:"size"`
	// PublishedAt is the database's time it arrived.
	PublishedAt time.Time `json:"published_at"`
	Verified    bool      `json:"verified"`
	// CosignedSize is the newest size a witness cosigned (0: none), by
	// Witness.
	CosignedSize int64  `json:"cosigned_size"`
	Witness      string `json:"witness"`
	// Refused is the newest refusal of this log a witness made and the
	// machine published ("" none): "rollback" (the log is smaller than
	// what the witness cosigned) or "fork" (another history), of a
	// checkpoint of RefusedSize by RefusedBy, who had cosigned
	// RefusedWitnessSize; RefusedAt is the database's time it arrived and
	// RefusalVerified says the machine's signature holds.
	Refused            string    `json:"refused"`
	RefusedBy          string    `json:"refused_by"`
	RefusedSize        int64     `json:"refused_size"`
	RefusedWitnessSize int64     `json:"refused_witness_size"`
	RefusedAt          time.Time `json:"refused_at"`
	RefusalVerified    bool      `json:"refusal_verified"`
}

// Checkpoints lists each machine's newest checkpoint and cosignature.
func (l *Lead) Checkpoints(ctx context.Context) ([]CheckpointView, error) {
	rows, err := l.c.Query(ctx, `SELECT DISTINCT ON (c.machine_id) c.machine_id, m.hostname, m.public_key, c.log_id, c.size, c.checkpoint,
		c.signature, c.published_at,
		coalesce((SELECT max(s.size) FROM team_cosignatures s WHERE s.machine_id = c.machine_id AND s.log_id = c.log_id), 0),
		coalesce((SELECT s.witness FROM team_cosignatures s WHERE s.machine_id = c.machine_id AND s.log_id = c.log_id ORDER BY s.size DESC LIMIT 1), ''),
		coalesce(r.reason, ''), coalesce(r.witness, ''), coalesce(r.size, 0), coalesce(r.witness_size, 0), r.received_at,
		coalesce(r.checkpoint, ''), coalesce(r.signature, '')
		FROM team_checkpoints c JOIN team_machines m ON m.machine_id = c.machine_id
		LEFT JOIN LATERAL (SELECT * FROM team_witness_refusals r WHERE r.machine_id = c.machine_id AND r.log_id = c.log_id
			ORDER BY r.received_at DESC, r.witness_size DESC LIMIT 1) r ON true
		ORDER BY c.machine_id, c.size DESC`)
	if err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (CheckpointView, error) {
		var v CheckpointView
		var key, text, sig, refusedCP, refusedSig string
		var refusedAt *time.Time
		err := row.Scan(&v.Machine, &v.Hostname, &key, &v.LogID, &v.Size, &text, &sig, &v.PublishedAt, &v.CosignedSize, &v.Witness,
			&v.Refused, &v.RefusedBy, &v.RefusedSize, &v.RefusedWitnessSize, &refusedAt, &refusedCP, &refusedSig)
		v.Verified = verify(key, sig, l.creds.TeamID, domainCheckpoint, v.Machine, v.LogID, fmt.Sprint(v.Size), text)
		if refusedAt != nil {
			v.RefusedAt = *refusedAt
			v.RefusalVerified = verify(key, refusedSig, l.creds.TeamID, domainRefusal, v.Machine, v.LogID, v.RefusedBy,
				fmt.Sprint(v.RefusedWitnessSize), v.Refused, fmt.Sprint(v.RefusedSize), refusedCP)
		}
		return v, err
	})
}

// DrillView is one drill report a machine shared.
type DrillView struct {
	Machine  string          `json:"machine"`
	Hostname string          `json:"hostname"`
	Report   json.RawMessage `json:"report"`
	Verified bool            `json:"verified"`
}

// Drills lists the drill reports of row rowID on machine ("" for every
// row of every machine), newest first, at most 200.
func (l *Lead) Drills(ctx context.Context, machine, rowID string) ([]DrillView, error) {
	rows, err := l.c.Query(ctx, `SELECT d.machine_id, m.hostname, m.public_key, d.report_json, d.signature
		FROM team_drill_reports d JOIN team_machines m ON m.machine_id = d.machine_id
		WHERE ($1 = '' OR d.machine_id = $1 OR m.hostname = $1) AND ($2 = '' OR d.row_id = $2)
		ORDER BY d.finished_at DESC LIMIT 200`, machine, rowID)
	if err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (DrillView, error) {
		var v DrillView
		var key, body, sig string
		err := row.Scan(&v.Machine, &v.Hostname, &key, &body, &sig)
		v.Report = json.RawMessage(body)
		v.Verified = verify(key, sig, l.creds.TeamID, domainDrill, v.Machine, body)
		return v, err
	})
}

// Export writes every row matching f (all pages) as CSV or JSON, as the
// Inventory exports its own: the machine and the member first. Rows hold
// no secret and no token, so neither does an export.
func (l *Lead) Export(ctx context.Context, f RowFilter, format string) ([]byte, error) {
	var all []TeamRow
	f.After, f.Limit = "", 1000
	for {
		page, next, err := l.Rows(ctx, f)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		f.After = next
	}
	switch format {
	case inventory.FormatJSON:
		now, err := now(ctx, l.c)
		if err != nil {
			return nil, fmt.Errorf("team: %w", err)
		}
		return json.MarshalIndent(struct {
			ExportedAt time.Time `json:"exported_at"`
			Rows       []TeamRow `json:"rows"`
		}{now, all}, "", "  ")
	case inventory.FormatCSV:
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write(append([]string{"machine", "member", "machine removed", "signature verified"}, inventory.CSVColumns...))
		for _, r := range all {
			w.Write(append(inventory.Cells(r.Hostname, r.Member, fmt.Sprint(r.Removed), fmt.Sprint(r.Verified)), inventory.CSVRecord(r.Row)...))
		}
		w.Flush()
		return b.Bytes(), w.Error()
	}
	return nil, fmt.Errorf("%w: export as csv or json", ErrInvalid)
}
