package team

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
)

// Request statuses (team_revocation_requests.status).
const (
	// StatusPending: the machine has not answered yet.
	StatusPending = "pending"
	// StatusDone: disabled locally, revoked at the provider and verified.
	StatusDone = "done"
	// StatusIncomplete: disabled locally, so nothing on the machine can
	// use it; the provider's revocation was not confirmed (the outcome
	// says which step).
	StatusIncomplete = "incomplete"
	// StatusFailed: the machine could not disable it.
	StatusFailed = "failed"
	// StatusRefused: the machine does not act on it (not signed by the
	// founding lead's key, no such authorization, not an OAuth one).
	StatusRefused = "refused"
)

// request is a revocation request as the machine it names reads it.
type request struct {
	ID          int64
	UID         string
	RowID       string
	Connected   time.Time
	Reason      string
	RequestedBy string
	RequestedAt time.Time
	Signature   string
}

// Outcome is what a machine did about a request, written back as
// evidence: the revocation's steps as custody reports them (each with the
// provider's HTTP status where there was one), and words for the lead.
type Outcome struct {
	RowID        string             `json:"row_id"`
	Hostname     string             `json:"hostname"`
	Steps        []oauth.RevokeStep `json:"steps"`
	RetryPending bool               `json:"retry_pending"`
	Words        string             `json:"words"`
}

// answer is a machine's signed answer, as queued.
type answer struct {
	UID       string          `json:"uid"`
	Status    string          `json:"status"`
	Outcome   json.RawMessage `json:"outcome"`
	Signature string          `json:"signature"`
}

func (a *answer) sign(k *SigningKey, team, machine string) {
	a.Signature = k.sign(team, domainAnswer, machine, a.UID, a.Status, string(a.Outcome))
}

// revokeTimeout bounds one revocation: the local step is at once, the
// provider's may wait on the network.
const revokeTimeout = 60 * time.Second

// answerRequests reads every pending request addressed to this machine
// (all of them, each time: a request inserted in a transaction that
// committed after a later one would slip past an id cursor, and the
// pending status is the cursor that cannot), acts on each it has not
// answered, and queues the answers. It returns with the connection's
// error only.
func (s *Syncer) answerRequests(ctx context.Context, c *pgx.Conn) error {
	rows, err := c.Query(ctx, `SELECT id, request_uid, row_id, row_connected_at, reason, requested_by, requested_at, request_signature
		FROM team_revocation_requests WHERE machine_id = current_user AND status = 'pending' ORDER BY id`)
	if err != nil {
		return err
	}
	reqs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[request])
	if err != nil {
		return err
	}
	for _, r := range reqs {
		if s.box.answered(r.UID) {
			continue // its answer waits in the outbox, or the request was replayed
		}
		status, out := s.act(ctx, r)
		body, _ := json.Marshal(out)
		a := answer{UID: r.UID, Status: status, Outcome: body}
		if _, err := s.queue(itemAnswer, r.UID, &a); err != nil {
			return err
		}
		if err := s.box.answer(r, status, s.cfg.Now()); err != nil {
			return err
		}
	}
	return nil
}

// act carries out one request: it checks the founding lead signed it,
// notes it before anything is done (so a replay of it is never acted on
// twice), and revokes as a person's Revoke does.
func (s *Syncer) act(ctx context.Context, r request) (string, Outcome) {
	out := Outcome{RowID: r.RowID, Hostname: s.creds.Hostname, Steps: []oauth.RevokeStep{}}
	refuse := func(words string) (string, Outcome) { out.Words = words; return StatusRefused, out }
	connected := strconv.FormatInt(r.Connected.Unix(), 10)
	if !verify(s.creds.FoundingLeadKey, r.Signature, s.creds.TeamID, domainRequest, r.UID, s.creds.Machine, r.RowID, connected, r.Reason) {
		s.log.Warn("team: a revocation request not signed by the founding lead's key was refused", "request", r.ID)
		return refuse("The request is not signed by the team's founding lead key, so this machine does not act on it.")
	}
	if err := s.box.receive(r, s.cfg.Now()); err != nil {
		return StatusFailed, Outcome{RowID: r.RowID, Hostname: s.creds.Hostname, Steps: []oauth.RevokeStep{}, Words: "This machine could not note the request; it tries again."}
	}
	if s.cfg.Revoker == nil {
		return refuse("This Yett process holds no OAuth custody.")
	}
	row, err := s.findRow(ctx, r.RowID)
	if errors.Is(err, inventory.ErrNotFound) {
		return refuse("This machine holds no authorization " + r.RowID + ".")
	} else if err != nil {
		return StatusFailed, Outcome{RowID: r.RowID, Hostname: s.creds.Hostname, Steps: []oauth.RevokeStep{}, Words: "This machine could not read its inventory."}
	}
	if row.Kind != inventory.KindOAuth {
		return refuse("Yett revokes OAuth authorizations on request; " + row.Name + " is a " + kindWords(row.Kind) + ", removed on this machine by its owner.")
	}
	if !row.ConnectedAt.Equal(r.Connected) {
		// Reconnected since the lead asked (it keeps its id): the grant
		// in service now is not the one the request is about.
		return refuse(row.Name + " was connected again on " + s.creds.Hostname + " after the request was made; ask again if the new connection must go too.")
	}
	rctx, cancel := context.WithTimeout(ctx, revokeTimeout)
	defer cancel()
	rep, err := s.cfg.Revoker.Revoke(rctx, r.RowID)
	defer s.Collect() // the row's new state goes to the team
	out.Steps = append(out.Steps, rep.Steps...)
	out.RetryPending = rep.RetryPending
	if err != nil && len(rep.Steps) == 0 {
		s.log.Warn("team: a requested revocation failed", "authorization", r.RowID, "err", err)
		out.Words = "Yett could not disable " + row.Name + " on " + s.creds.Hostname + "; its owner looks at it in the Inventory."
		return StatusFailed, out
	}
	for _, st := range rep.Steps {
		if !st.OK || st.Unverified {
			out.Words = row.Name + " is disabled on " + s.creds.Hostname + ": nothing there can use it. The provider's revocation was not confirmed (" + st.Step + "); Yett keeps trying while it runs."
			return StatusIncomplete, out
		}
	}
	if err != nil || rep.RetryPending {
		out.Words = row.Name + " is disabled on " + s.creds.Hostname + ": nothing there can use it. The provider's revocation was not confirmed; Yett keeps trying while it runs."
		return StatusIncomplete, out
	}
	out.Words = row.Name + " is disabled on " + s.creds.Hostname + ", revoked at the provider, and the provider confirmed its tokens are inactive."
	return StatusDone, out
}

func (s *Syncer) findRow(ctx context.Context, id string) (inventory.Row, error) {
	rows, err := s.cfg.Inventory.Rows(ctx, inventory.Filter{})
	if err != nil {
		return inventory.Row{}, err
	}
	for _, r := range rows {
		if r.ID == id {
			return r, nil
		}
	}
	return inventory.Row{}, inventory.ErrNotFound
}

func kindWords(k string) string {
	switch k {
	case inventory.KindHTTP:
		return "stored API credential"
	case inventory.KindSSH:
		return "SSH host"
	case inventory.KindMCPServer:
		return "MCP server"
	}
	return k
}

// receive notes a request before it is acted on.
func (o *outbox) receive(r request, now time.Time) error {
	return o.db.Exec(`INSERT INTO requests (uid, request_id, row_id, status, received_at, answered_at) VALUES (?, ?, ?, 'received', ?, 0)
		ON CONFLICT (uid) DO NOTHING`, r.UID, r.ID, r.RowID, now.Unix()).Error
}

// answer notes that a request was answered (its answer is queued).
func (o *outbox) answer(r request, status string, now time.Time) error {
	return o.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`INSERT INTO requests (uid, request_id, row_id, status, received_at, answered_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (uid) DO UPDATE SET status = excluded.status, answered_at = excluded.answered_at`,
			r.UID, r.ID, r.RowID, status, now.Unix(), now.Unix()).Error; err != nil {
			return err
		}
		return nil
	})
}

// answered says a request was answered here already.
func (o *outbox) answered(uid string) bool {
	var n int
	o.db.Raw(`SELECT count(*) FROM requests WHERE uid = ? AND answered_at > 0`, uid).Scan(&n)
	return n > 0
}
