package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/inventory"
)

// Lead is a lead's session: it reads every machine's rows, reports,
// checkpoints and requests, and asks for revocations. What it reads comes
// with each record's signature checked against its machine's key.
type Lead struct {
	c     *pgx.Conn
	creds *Credentials
}

// OpenLead logs in as this machine's role, which must be a lead's.
// Errors: ErrNotLead, ErrUnreachable.
func OpenLead(ctx context.Context, creds *Credentials) (*Lead, error) {
	if !creds.Lead() {
		return nil, ErrNotLead
	}
	c, err := connect(ctx, creds.Database, creds.Machine, &creds.password)
	if err != nil {
		return nil, err
	}
	return &Lead{c: c, creds: creds}, nil
}

// Close ends the session.
func (l *Lead) Close() error { return l.c.Close(context.Background()) }

// Machine is one machine of the team, as the lead sees it.
type Machine struct {
	ID          string     `json:"id"`
	Member      string     `json:"member"`
	Kind        string     `json:"kind"`
	Hostname    string     `json:"hostname"`
	Fingerprint string     `json:"fingerprint"`
	JoinedAt    time.Time  `json:"joined_at"`
	RemovedAt   *time.Time `json:"removed_at"`
	LastSync    *time.Time `json:"last_sync"`
	// ClockSkewSeconds is how far the machine's clock was from the
	// database's at its last sync (positive: ahead).
	ClockSkewSeconds *float64 `json:"clock_skew_seconds"`
	Version          string   `json:"version"`
	Rows             int      `json:"rows"`
}

// Machines lists every machine, removed ones too, by member.
func (l *Lead) Machines(ctx context.Context) ([]Machine, error) {
	rows, err := l.c.Query(ctx, `SELECT m.machine_id, m.member, m.kind, m.hostname, m.public_key, m.joined_at, m.removed_at, m.last_sync_at,
		m.clock_skew_seconds, m.yett_version, (SELECT count(*) FROM team_rows r WHERE r.machine_id = m.machine_id AND NOT r.deleted)
		FROM team_machines m ORDER BY m.member, m.hostname`)
	if err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Machine, error) {
		var m Machine
		var key string
		err := row.Scan(&m.ID, &m.Member, &m.Kind, &m.Hostname, &key, &m.JoinedAt, &m.RemovedAt, &m.LastSync, &m.ClockSkewSeconds, &m.Version, &m.Rows)
		m.Fingerprint = Fingerprint(key)
		return m, err
	})
}

// TeamRow is one inventory row of one machine.
type TeamRow struct {
	Machine  string        `json:"machine"`
	Hostname string        `json:"hostname"`
	Member   string        `json:"member"`
	Removed  bool          `json:"removed"`
	Row      inventory.Row `json:"row"`
	// Verified: the row carries its machine's signature.
	Verified  bool      `json:"verified"`
	UpdatedAt time.Time `json:"updated_at"`
}

// RowFilter narrows the team's rows: Filter as the Inventory's (text and
// one of its states), Machine to one machine; After is the cursor the
// previous page returned, Limit the page's size (0: 100, at most 1000).
type RowFilter struct {
	inventory.Filter
	Machine string `json:"machine"`
	After   string `json:"after"`
	Limit   int    `json:"limit"`
}

// Rows returns one page of the team's rows matching f, by name, and the
// cursor of the next page ("" after the last). Due reviews and overdue
// drills are counted on the database's clock, so a member whose clock is
// far off does not hide them.
func (l *Lead) Rows(ctx context.Context, f RowFilter) ([]TeamRow, string, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	where, args := []string{"NOT r.deleted"}, []any{}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	switch f.State {
	case "":
	case inventory.FilterUncontrolled:
		where = append(where, "NOT r.controlled")
	case inventory.FilterDrillOverdue:
		where = append(where, "r.next_drill <= now() AND r.state IN ('active', 'suspended')")
	case inventory.FilterReviewDue:
		where = append(where, "r.review_by <= now()")
	case inventory.FilterNeedsReconnection, inventory.FilterSuspended:
		where = append(where, "r.state = "+arg(f.State))
	case inventory.FilterRevoked:
		where = append(where, "r.state IN ('revoked', 'disabled')")
	default:
		return nil, "", fmt.Errorf("%w: no such filter", ErrInvalid)
	}
	if f.Machine != "" {
		where = append(where, "(r.machine_id = "+arg(f.Machine)+" OR m.hostname = "+arg(f.Machine)+")")
	}
	for _, w := range strings.Fields(strings.ToLower(f.Text)) {
		where = append(where, "lower(concat_ws(' ', r.row_id, r.name, r.provider, r.account_ref, r.environment, r.owner, r.backup_revoker, r.state, m.hostname, m.member)) LIKE "+
			arg("%"+likeEscape(w)+"%"))
	}
	if f.After != "" {
		c, err := parseCursor(f.After)
		if err != nil {
			return nil, "", err
		}
		where = append(where, "(lower(r.name), r.machine_id, r.row_id) > ("+arg(c.Name)+", "+arg(c.Machine)+", "+arg(c.Row)+")")
	}
	q := `SELECT r.machine_id, m.hostname, m.member, m.removed_at IS NOT NULL, m.public_key, r.row_id, r.row_json, r.signature, r.updated_at,
		r.review_by <= now(), coalesce(r.next_drill <= now() AND r.state IN ('active', 'suspended'), false)
		FROM team_rows r JOIN team_machines m ON m.machine_id = r.machine_id
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY lower(r.name), r.machine_id, r.row_id LIMIT ` + arg(limit+1)
	rows, err := l.c.Query(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("team: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (TeamRow, error) {
		var t TeamRow
		var key, rowID, body, sig string
		var reviewDue *bool
		var drillOverdue bool
		if err := row.Scan(&t.Machine, &t.Hostname, &t.Member, &t.Removed, &key, &rowID, &body, &sig, &t.UpdatedAt, &reviewDue, &drillOverdue); err != nil {
			return t, err
		}
		if err := json.Unmarshal([]byte(body), &t.Row); err != nil {
			return t, fmt.Errorf("team: a row of %s does not read", t.Hostname)
		}
		t.Row.ReviewDue, t.Row.DrillOverdue = reviewDue != nil && *reviewDue, drillOverdue
		t.Verified = t.Row.ID == rowID && verify(key, sig, l.creds.TeamID, domainRow, t.Machine, rowID, "false", body)
		return t, nil
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = cursor{Name: strings.ToLower(last.Row.Name), Machine: last.Machine, Row: last.Row.ID}.String()
	}
	return out, next, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// RequestRevocation asks machine (its id or host name) to revoke row, for
// reason: the request names the row's connection as the lead sees it
// (connected at), is signed with this lead's key and inserted; the
// machine is woken at once if it is connected, and reads it when it next
// connects otherwise. Members act only on requests the founding lead's key
// signed, so only that lead's machine asks. Errors: ErrNotLead,
// ErrNotFound, ErrInvalid.
func (l *Lead) RequestRevocation(ctx context.Context, machine, rowID, reason string) (RequestView, error) {
	if l.creds.PublicKey != l.creds.FoundingLeadKey {
		return RequestView{}, fmt.Errorf("%w: members act only on requests signed by the founding lead's key, which another machine holds", ErrNotLead)
	}
	reason = strings.TrimSpace(reason)
	if len(reason) > 500 || strings.ContainsAny(reason, "\x00") || rowID == "" || len(rowID) > 200 {
		return RequestView{}, fmt.Errorf("%w: a reason is at most 500 characters", ErrInvalid)
	}
	var id, body string
	err := l.c.QueryRow(ctx, `SELECT m.machine_id, r.row_json FROM team_machines m JOIN team_rows r ON r.machine_id = m.machine_id
		WHERE (m.machine_id = $1 OR m.hostname = $1) AND r.row_id = $2 AND NOT r.deleted`, machine, rowID).Scan(&id, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return RequestView{}, fmt.Errorf("%w: no machine %q holds a row %q", ErrNotFound, machine, rowID)
	} else if err != nil {
		return RequestView{}, fmt.Errorf("team: %w", err)
	}
	var row inventory.Row
	if err := json.Unmarshal([]byte(body), &row); err != nil {
		return RequestView{}, fmt.Errorf("team: the row does not read")
	}
	uid := "rq-" + randomHex(12)
	connected := row.ConnectedAt.UTC().Truncate(time.Second)
	sig := l.creds.key.sign(l.creds.TeamID, domainRequest, uid, id, rowID, strconv.FormatInt(connected.Unix(), 10), reason)
	if _, err := l.c.Exec(ctx, `INSERT INTO team_revocation_requests (request_uid, machine_id, row_id, row_connected_at, reason, request_signature)
		VALUES ($1, $2, $3, $4, $5, $6)`, uid, id, rowID, connected, reason, sig); err != nil {
		return RequestView{}, fmt.Errorf("team: %w", err)
	}
	views, err := l.requests(ctx, "q.request_uid = $1", uid)
	if err != nil || len(views) != 1 {
		return RequestView{}, fmt.Errorf("team: the request was made but does not read back: %v", err)
	}
	return views[0], nil
}
