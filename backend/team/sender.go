package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// sender keeps a connection to the team database while the syncer runs:
// it sends what the outbox holds, answers revocation requests and waits
// for the next notification, item or poll. A lost connection is tried
// again after a wait that doubles up to MaxBackoff, and back to
// MinBackoff once a session was established.
func (s *Syncer) sender() {
	defer s.wg.Done()
	backoff := s.cfg.MinBackoff
	for {
		connected, err := s.session(s.ctx)
		if s.ctx.Err() != nil {
			return
		}
		if connected {
			backoff = s.cfg.MinBackoff
		}
		s.log.Info("team: not connected to the team database", "err", err, "retry_in", backoff)
		s.setStatus(func(st *Status) { st.Connected, st.Problem = false, problemWords(err) })
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, s.cfg.MaxBackoff)
	}
}

// problemWords says why the syncer is not connected, for the person.
func problemWords(err error) string {
	switch {
	case errors.Is(err, ErrUnreachable), errors.Is(err, ErrSchemaBehind):
		return strings.TrimPrefix(err.Error(), "team: ")
	case err == nil:
		return "The connection to the team database ended."
	}
	return "The team database refused what this machine sent; Yett tries again."
}

// ErrSchemaBehind: the team database is at an older schema than this
// Yett's; the lead's next yett team command brings it up to date.
var ErrSchemaBehind = errors.New("team: the team database is older than this Yett: the founding lead's next yett team command updates it")

// session is one connection: it returns when the connection fails or the
// syncer stops. connected says the login and the first exchange worked.
func (s *Syncer) session(ctx context.Context) (connected bool, err error) {
	c, err := connect(ctx, s.creds.Database, s.creds.Machine, &s.creds.password)
	if err != nil {
		return false, err
	}
	defer c.Close(context.Background())
	if v, err := databaseVersion(ctx, c); err != nil {
		return false, err
	} else if v < SchemaVersion {
		return false, ErrSchemaBehind
	}
	if _, err := c.Exec(ctx, `LISTEN `+ident(requestChannel(s.creds.Machine))); err != nil {
		return false, err
	}
	if _, ok := s.box.seqBase(); !ok {
		var base int64
		if err := c.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM team_rows WHERE machine_id = current_user`).Scan(&base); err != nil {
			return false, err
		}
		if err := s.box.setSeqBase(base); err != nil {
			return false, err
		}
	}
	s.setStatus(func(st *Status) { st.Connected, st.Problem = true, "" })
	for {
		if err := s.flush(ctx, c); err != nil {
			return true, err
		}
		if err := s.answerRequests(ctx, c); err != nil {
			return true, err
		}
		if err := s.flush(ctx, c); err != nil {
			return true, err
		}
		if err := s.heartbeat(ctx, c); err != nil {
			return true, err
		}
		if err := s.wait(ctx, c); err != nil {
			return true, err
		}
	}
}

// wait returns at a notification, when something is queued, after Poll,
// or with the connection's failure.
func (s *Syncer) wait(ctx context.Context, c *pgx.Conn) error {
	wctx, cancel := context.WithTimeout(ctx, s.cfg.Poll)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-s.kick:
			cancel()
		case <-stop:
		}
	}()
	_, err := c.WaitForNotification(wctx)
	if err != nil && wctx.Err() != nil && ctx.Err() == nil {
		// Our own timeout or a kick: the connection stays usable.
		return nil
	}
	return err
}

// heartbeat tells the team this machine synced, on the database's clock,
// with how far this machine's clock is from it.
func (s *Syncer) heartbeat(ctx context.Context, c *pgx.Conn) error {
	var server time.Time
	if err := c.QueryRow(ctx, `SELECT now()`).Scan(&server); err != nil {
		return err
	}
	local := s.cfg.Now()
	if _, err := c.Exec(ctx, `UPDATE team_machines SET last_sync_at = now(), clock_skew_seconds = $1, yett_version = $2
		WHERE machine_id = current_user`, local.Sub(server).Seconds(), s.cfg.Version); err != nil {
		return err
	}
	if err := s.box.synced(server, local); err != nil {
		return err
	}
	s.setStatus(func(st *Status) { st.LastSynced, st.Waiting = server.UTC(), s.box.waiting() })
	return nil
}

// flush sends the outbox, oldest first, a batch per transaction (its
// statements in one round trip), and drops each batch from the outbox once
// its transaction committed. A record the database refuses as data (a
// constraint: a value too large) would block every record after it: it is
// sent alone, and dropped with a warning if refused again.
func (s *Syncer) flush(ctx context.Context, c *pgx.Conn) error {
	base, _ := s.box.seqBase()
	for {
		items, err := s.box.next(batch)
		if err != nil || len(items) == 0 {
			return err
		}
		err = send(ctx, c, base, items)
		if isDataError(err) {
			err = s.flushOneByOne(ctx, c, base, items)
		}
		if err != nil {
			return err
		}
		seqs := make([]int64, len(items))
		for i, it := range items {
			seqs[i] = it.Seq
		}
		if err := s.box.done(seqs); err != nil {
			return err
		}
		s.setStatus(func(st *Status) { st.Waiting = s.box.waiting() })
	}
}

// send applies items in one transaction.
func send(ctx context.Context, c *pgx.Conn, base int64, items []item) error {
	return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, it := range items {
			if err := queueItem(b, base, it); err != nil {
				return err
			}
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

func (s *Syncer) flushOneByOne(ctx context.Context, c *pgx.Conn, base int64, items []item) error {
	for _, it := range items {
		err := send(ctx, c, base, []item{it})
		if isDataError(err) {
			s.log.Warn("team: the team database refused a record; it is not sent again", "kind", it.Kind, "key", it.Key, "sqlstate", sqlState(err))
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// isDataError: the database refused a value (SQLSTATE classes 22 and
// 23), not the connection or a privilege.
func isDataError(err error) bool {
	st := sqlState(err)
	return strings.HasPrefix(st, "22") || strings.HasPrefix(st, "23")
}

// queueItem adds the statement that writes one item, idempotently: a row
// is an upsert that keeps the version of the highest seq, everything else
// an insert that does nothing when the record is there, or an answer to a
// request still pending.
func queueItem(b *pgx.Batch, base int64, it item) error {
	var err error
	switch it.Kind {
	case itemRow:
		var r sharedRow
		if err = json.Unmarshal(it.Payload, &r); err == nil {
			queueRow(b, base+it.Seq, r)
		}
	case itemDrill:
		var d sharedDrill
		if err = json.Unmarshal(it.Payload, &d); err == nil {
			err = queueDrill(b, d)
		}
	case itemCheckpoint:
		var cp sharedCheckpoint
		if err = json.Unmarshal(it.Payload, &cp); err == nil {
			b.Queue(`INSERT INTO team_checkpoints (machine_id, log_id, size, root, verifier_key, checkpoint, signature)
				VALUES (current_user, $1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, cp.LogID, cp.Size, cp.Root, cp.VerifierKey, cp.Checkpoint, cp.Signature)
		}
	case itemCosignature:
		var cs sharedCosignature
		if err = json.Unmarshal(it.Payload, &cs); err == nil {
			b.Queue(`INSERT INTO team_cosignatures (machine_id, log_id, size, witness, cosignature, signature)
				VALUES (current_user, $1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, cs.LogID, cs.Size, cs.Witness, cs.Cosignature, cs.Signature)
		}
	case itemRefusal:
		var r sharedRefusal
		if err = json.Unmarshal(it.Payload, &r); err == nil {
			b.Queue(`INSERT INTO team_witness_refusals (machine_id, log_id, witness, witness_size, reason, size, checkpoint, signature)
				VALUES (current_user, $1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`, r.LogID, r.Witness, r.WitnessSize, r.Reason, r.Size, r.Checkpoint, r.Signature)
		}
	case itemAnswer:
		var a answer
		if err = json.Unmarshal(it.Payload, &a); err == nil {
			b.Queue(`UPDATE team_revocation_requests SET status = $1, outcome_json = $2, answered_at = now(), answer_signature = $3
				WHERE request_uid = $4 AND status = 'pending'`, a.Status, string(a.Outcome), a.Signature, a.UID)
		}
	default:
		err = fmt.Errorf("team: an outbox item of unknown kind %q", it.Kind)
	}
	return err
}

func queueRow(b *pgx.Batch, seq int64, r sharedRow) {
	if r.Deleted {
		b.Queue(`INSERT INTO team_rows (machine_id, row_id, seq, deleted, kind, name, provider, account_ref, environment, owner,
			backup_revoker, state, controlled, drill_every_days, drill_kind, row_json, signature)
			VALUES (current_user, $1, $2, true, '', '', '', '', '', '', '', '', false, 0, '', '{}', $3)
			ON CONFLICT (machine_id, row_id) DO UPDATE SET seq = excluded.seq, deleted = true, signature = excluded.signature, updated_at = now()
			WHERE team_rows.seq < excluded.seq`, r.RowID, seq, r.Signature)
		return
	}
	b.Queue(`INSERT INTO team_rows (machine_id, row_id, seq, deleted, kind, name, provider, account_ref, environment, owner,
		backup_revoker, state, controlled, review_by, next_drill, drill_every_days, drill_kind, last_drill_at, last_drill_passed, row_json, signature)
		VALUES (current_user, $1, $2, false, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
		ON CONFLICT (machine_id, row_id) DO UPDATE SET seq = excluded.seq, deleted = false, kind = excluded.kind, name = excluded.name,
			provider = excluded.provider, account_ref = excluded.account_ref, environment = excluded.environment, owner = excluded.owner,
			backup_revoker = excluded.backup_revoker, state = excluded.state, controlled = excluded.controlled, review_by = excluded.review_by,
			next_drill = excluded.next_drill, drill_every_days = excluded.drill_every_days, drill_kind = excluded.drill_kind,
			last_drill_at = excluded.last_drill_at, last_drill_passed = excluded.last_drill_passed, row_json = excluded.row_json,
			signature = excluded.signature, updated_at = now()
		WHERE team_rows.seq < excluded.seq`,
		r.RowID, seq, r.Kind, r.Name, r.Provider, r.AccountRef, r.Environment, r.Owner, r.BackupRevoker, r.State, r.Controlled,
		r.ReviewBy, r.NextDrill, r.DrillEveryDays, r.DrillKind, r.LastDrillAt, r.LastDrillPassed, string(r.RowJSON), r.Signature)
}

func queueDrill(b *pgx.Batch, d sharedDrill) error {
	var h sharedReport
	if err := json.Unmarshal(d.Report, &h); err != nil {
		return err
	}
	b.Queue(`INSERT INTO team_drill_reports (machine_id, drill_id, row_id, kind, trigger, passed, started_at, finished_at, report_json, signature)
		VALUES (current_user, $1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
		h.ID, h.AuthorizationID, h.Kind, h.Trigger, h.Passed, h.StartedAt, h.FinishedAt, string(d.Report), d.Signature)
	return nil
}
