//go:build unix

package team

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// rawRow writes a minimal team_rows row for machine as the connection's
// role, as a hostile client would: plain SQL, no Yett code.
func rawRow(ctx context.Context, c *pgx.Conn, machine, rowID string) error {
	_, err := c.Exec(ctx, `INSERT INTO team_rows (machine_id, row_id, seq, kind, name, provider, account_ref, environment, owner,
		backup_revoker, state, controlled, drill_every_days, drill_kind, row_json, signature)
		VALUES ($1, $2, 1, 'oauth', 'n', 'p', 'a', 'development', 'o', 'b', 'active', true, 90, 'unattended', '{}', 's')`, machine, rowID)
	return err
}

func count(ctx context.Context, t *testing.T, c *pgx.Conn, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := c.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// refused says err is PostgreSQL's refusal: a privilege or a policy
// (42501), and nothing else (a typo in the test would be 42703).
func refused(t *testing.T, what string, err error) {
	t.Helper()
	if sqlState(err) != "42501" {
		t.Fatalf("%s: want a refusal (42501), got %v", what, err)
	}
}

// TestRowLevelSecurity: each member's role sees and writes only its own
// machine's rows; only a lead inserts a revocation request, and only as
// itself; nobody forges another machine's checkpoint or answers another
// machine's request. Every check connects as the machine's own role, which
// owns nothing and bypasses nothing.
func TestRowLevelSecurity(t *testing.T) {
	tt := newTestTeam(t)
	ctx := context.Background()
	mia, ned := tt.join("mia", KindMember, "mia-pc"), tt.join("ned", KindMember, "ned-pc")
	miaC, nedC, leadC := tt.conn(mia), tt.conn(ned), tt.conn(tt.lead)
	if err := rawRow(ctx, miaC, mia.Machine, "az-mia"); err != nil {
		t.Fatalf("mia writes her own row: %v", err)
	}
	if err := rawRow(ctx, nedC, ned.Machine, "az-ned"); err != nil {
		t.Fatalf("ned writes his own row: %v", err)
	}
	if _, err := leadC.Exec(ctx, `INSERT INTO team_revocation_requests (request_uid, machine_id, row_id, row_connected_at, reason, request_signature)
		VALUES ('uid-1', $1, 'az-ned', now(), 'left the company', 's')`, ned.Machine); err != nil {
		t.Fatalf("the lead asks for a revocation: %v", err)
	}

	t.Run("member cannot read another member's rows", func(t *testing.T) {
		if n := count(ctx, t, miaC, `SELECT count(*) FROM team_rows`); n != 1 {
			t.Fatalf("mia sees %d rows", n)
		}
		if n := count(ctx, t, miaC, `SELECT count(*) FROM team_rows WHERE machine_id = $1`, ned.Machine); n != 0 {
			t.Fatalf("mia sees %d of ned's rows", n)
		}
		if n := count(ctx, t, miaC, `SELECT count(*) FROM team_machines`); n != 1 {
			t.Fatalf("mia sees %d machines", n)
		}
		if n := count(ctx, t, miaC, `SELECT count(*) FROM team_revocation_requests`); n != 0 {
			t.Fatalf("mia sees %d of ned's requests", n)
		}
		if n := count(ctx, t, miaC, `SELECT count(*) FROM team_invitations`); n != 1 {
			t.Fatalf("mia sees %d invitations", n)
		}
	})
	t.Run("member cannot write another member's rows", func(t *testing.T) {
		refused(t, "insert as ned", rawRow(ctx, miaC, ned.Machine, "az-forged"))
		tag, err := miaC.Exec(ctx, `UPDATE team_rows SET owner = 'mallory' WHERE machine_id = $1`, ned.Machine)
		if err != nil || tag.RowsAffected() != 0 {
			t.Fatalf("update of ned's row: %v, %d rows", err, tag.RowsAffected())
		}
		// Moving her own row onto ned's machine breaks the policy's check.
		_, err = miaC.Exec(ctx, `UPDATE team_rows SET machine_id = $1 WHERE machine_id = $2`, ned.Machine, mia.Machine)
		refused(t, "moving a row to ned", err)
		_, err = miaC.Exec(ctx, `DELETE FROM team_rows`)
		refused(t, "delete", err)
		tag, err = miaC.Exec(ctx, `UPDATE team_machines SET hostname = 'x' WHERE machine_id = $1`, ned.Machine)
		if err != nil || tag.RowsAffected() != 0 {
			t.Fatalf("update of ned's machine: %v, %d rows", err, tag.RowsAffected())
		}
		_, err = miaC.Exec(ctx, `UPDATE team_machines SET kind = 'lead' WHERE machine_id = $1`, mia.Machine)
		refused(t, "making herself a lead", err)
		_, err = miaC.Exec(ctx, `UPDATE team_machines SET public_key = 'ed25519:x' WHERE machine_id = $1`, mia.Machine)
		refused(t, "replacing her key", err)
		if n := count(ctx, t, tt.superuser(), `SELECT count(*) FROM team_rows WHERE owner = 'mallory' OR row_id = 'az-forged'`); n != 0 {
			t.Fatalf("%d forged rows reached the table", n)
		}
	})
	t.Run("member cannot insert a revocation request", func(t *testing.T) {
		_, err := miaC.Exec(ctx, `INSERT INTO team_revocation_requests (request_uid, machine_id, row_id, row_connected_at, reason, request_signature)
			VALUES ('uid-2', $1, 'az-ned', now(), 'x', 's')`, ned.Machine)
		refused(t, "a member's request", err)
		tag, err := miaC.Exec(ctx, `UPDATE team_revocation_requests SET status = 'refused'`)
		if err != nil || tag.RowsAffected() != 0 {
			t.Fatalf("mia answering ned's request: %v, %d rows", err, tag.RowsAffected())
		}
	})
	t.Run("member cannot forge another machine's checkpoint", func(t *testing.T) {
		_, err := miaC.Exec(ctx, `INSERT INTO team_checkpoints (machine_id, log_id, size, root, verifier_key, checkpoint, signature)
			VALUES ($1, 'log', 10, 'r', 'k', 'c', 's')`, ned.Machine)
		refused(t, "a checkpoint as ned", err)
		_, err = miaC.Exec(ctx, `INSERT INTO team_cosignatures (machine_id, log_id, size, witness, cosignature, signature)
			VALUES ($1, 'log', 10, 'w', 'c', 's')`, ned.Machine)
		refused(t, "a cosignature as ned", err)
		_, err = miaC.Exec(ctx, `INSERT INTO team_witness_refusals (machine_id, log_id, witness, witness_size, reason, size, checkpoint, signature)
			VALUES ($1, 'log', 'w', 40, 'rollback', 20, 'c', 's')`, ned.Machine)
		refused(t, "a witness's refusal as ned", err)
	})
	t.Run("lead reads every row and asks only as itself", func(t *testing.T) {
		if n := count(ctx, t, leadC, `SELECT count(*) FROM team_rows`); n != 2 {
			t.Fatalf("the lead sees %d rows", n)
		}
		var by string
		if err := leadC.QueryRow(ctx, `SELECT requested_by FROM team_revocation_requests`).Scan(&by); err != nil || by != tt.lead.Machine {
			t.Fatalf("requested_by %q, %v", by, err)
		}
		_, err := leadC.Exec(ctx, `INSERT INTO team_revocation_requests (request_uid, machine_id, row_id, row_connected_at, reason, request_signature, requested_by)
			VALUES ('uid-3', $1, 'az-ned', now(), 'x', 's', $2)`, ned.Machine, mia.Machine)
		refused(t, "a request in mia's name", err)
		_, err = leadC.Exec(ctx, `INSERT INTO team_revocation_requests (request_uid, machine_id, row_id, row_connected_at, reason, request_signature, status)
			VALUES ('uid-4', $1, 'az-ned', now(), 'x', 's', 'done')`, ned.Machine)
		refused(t, "a request already answered", err)
		refused(t, "the lead writing ned's row", rawRow(ctx, leadC, ned.Machine, "az-lead"))
	})
	t.Run("only the machine answers its request, once", func(t *testing.T) {
		tag, err := nedC.Exec(ctx, `UPDATE team_revocation_requests SET status = 'done', answered_at = now() WHERE request_uid = 'uid-1'`)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("ned's answer: %v, %d", err, tag.RowsAffected())
		}
		tag, err = nedC.Exec(ctx, `UPDATE team_revocation_requests SET status = 'pending' WHERE request_uid = 'uid-1'`)
		if err != nil || tag.RowsAffected() != 0 {
			t.Fatalf("ned re-opening his answer: %v, %d", err, tag.RowsAffected())
		}
		_, err = nedC.Exec(ctx, `UPDATE team_revocation_requests SET reason = 'x' WHERE request_uid = 'uid-1'`)
		refused(t, "ned rewriting the reason", err)
	})
}
