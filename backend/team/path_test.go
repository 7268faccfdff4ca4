//go:build unix

package team_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

// TestThreeMachines is the whole path with three data directories
// as three machines: the lead creates the team and invites two members;
// every row of every machine appears at the lead; a drill report appears;
// a revocation request reaches an online member, which disables the
// authorization, revokes it at the provider (RFC 7009) and verifies it,
// and writes the evidence back, signed; a request for a member whose vault
// is locked (its Yett shares nothing then) waits, says where and since
// when and who else can cut it off, and completes when it unlocks.
func TestThreeMachines(t *testing.T) {
	pg := pgtest.Shared(t)
	db, admin := teamDatabase(t, pg)
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: clientCanary})
	tokens := newTokenRecorder(t, p)
	ctx := context.Background()

	lea, mia, ned := newMachine(t, "lea-laptop"), newMachine(t, "mia-desktop"), newMachine(t, "ned-pc")
	createTeam(t, lea, db, admin)
	invite(t, lea, mia, "mia")
	invite(t, lea, ned, "ned")
	miaAZ := mia.connect(p, tokens, "tracker", "mia", "bob")
	nedAZ := ned.connect(p, tokens, "billing", "ned", "carol")
	mia.addCredential("mia key")
	ned.addCredential("ned key")
	lea.addCredential("lea key")

	lead, err := team.OpenLead(ctx, lea.creds())
	if err != nil {
		t.Fatal(err)
	}
	defer lead.Close()
	rowsAt := func() map[string]team.TeamRow {
		rows, _, err := lead.Rows(ctx, team.RowFilter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]team.TeamRow{}
		for _, r := range rows {
			out[r.Hostname+"/"+r.Row.Name] = r
		}
		return out
	}
	waitFor(t, "every machine's rows at the lead", func() bool { return len(rowsAt()) == 5 })
	rows := rowsAt()
	for key, r := range rows {
		if !r.Verified {
			t.Errorf("%s: the row's signature does not verify", key)
		}
	}
	if r := rows["mia-desktop/tracker"]; r.Member != "mia" || r.Row.Owner != "mia" || r.Row.BackupRevoker != "bob" || r.Row.ID != miaAZ || !r.Row.Controlled {
		t.Fatalf("mia's authorization at the lead: %+v", r)
	}
	uncontrolled, _, err := lead.Rows(ctx, team.RowFilter{Filter: inventory.Filter{State: inventory.FilterUncontrolled}})
	if err != nil || len(uncontrolled) != 3 {
		t.Fatalf("rows not under control (the three API keys name no owner): %d, %v", len(uncontrolled), err)
	}
	machines, err := lead.Machines(ctx)
	if err != nil || len(machines) != 3 {
		t.Fatalf("machines: %+v, %v", machines, err)
	}
	csvOut, err := lead.Export(ctx, team.RowFilter{}, inventory.FormatCSV)
	if err != nil || strings.Count(string(csvOut), "\n") != 6 || !strings.HasPrefix(string(csvOut), "machine,member,") || !strings.Contains(string(csvOut), "mia-desktop,mia,") {
		t.Fatalf("the CSV export: %v\n%s", err, csvOut)
	}
	jsonOut, err := lead.Export(ctx, team.RowFilter{Machine: ned.host}, inventory.FormatJSON)
	if err != nil || strings.Count(string(jsonOut), `"machine": "yett_`) != 2 {
		t.Fatalf("the JSON export of ned's rows: %v\n%s", err, jsonOut)
	}
	for _, out := range [][]byte{csvOut, jsonOut} {
		if strings.Contains(string(out), "CANARY") {
			t.Fatal("an export holds a canary")
		}
	}

	// A drill report appears at the lead.
	rep, err := mia.k.State().Inventory.RunDrill(ctx, miaAZ, inventory.DrillUnattended, inventory.TriggerPerson)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "mia's drill report at the lead", func() bool {
		ds, err := lead.Drills(ctx, mia.host, miaAZ)
		return err == nil && len(ds) == 1 && ds[0].Verified && strings.Contains(string(ds[0].Report), rep.ID)
	})

	// An online member gets the request at once and answers it.
	online, err := lead.RequestRevocation(ctx, mia.host, miaAZ, "mia's laptop was stolen")
	if err != nil {
		t.Fatal(err)
	}
	if online.Status != team.StatusPending || !strings.Contains(online.Waiting, "pending at mia-desktop since") || !strings.Contains(online.Waiting, "backup revoker: bob") {
		t.Fatalf("the request as made: %+v", online)
	}
	done := waitRequest(t, lead, online.UID, team.StatusDone)
	if !done.Verified || done.Outcome == nil || len(done.Outcome.Steps) < 3 {
		t.Fatalf("the online member's answer: %+v", done)
	}
	for _, st := range done.Outcome.Steps {
		if !st.OK {
			t.Errorf("step %s: %s", st.Step, st.Detail)
		}
	}
	if v, err := mia.custody().Authorization(miaAZ); err != nil || v.State != oauth.StateRevoked {
		t.Fatalf("mia's authorization after the request: %+v, %v", v, err)
	}

	// An offline member: the request waits, and is done at its return.
	ned.lock()
	waitFor(t, "ned's syncer to stop", func() bool { return ned.k.Team() == nil })
	offline, err := lead.RequestRevocation(ctx, ned.host, nedAZ, "ned left the team")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(offline.Waiting, "pending at ned-pc since") || !strings.Contains(offline.Waiting, "backup revoker: carol") {
		t.Fatalf("the offline request: %q", offline.Waiting)
	}
	if v, _ := ned.custody().Authorization(nedAZ); v.State != oauth.StateActive {
		t.Fatalf("ned's authorization changed while ned was offline: %s", v.State)
	}
	ned.unlock()
	waitRequest(t, lead, offline.UID, team.StatusDone)
	if v, _ := ned.custody().Authorization(nedAZ); v.State != oauth.StateRevoked {
		t.Fatalf("ned's authorization after its return: %s", v.State)
	}
	waitFor(t, "the revoked rows at the lead", func() bool {
		rs, _, err := lead.Rows(ctx, team.RowFilter{Filter: inventory.Filter{State: inventory.FilterRevoked}})
		return err == nil && len(rs) == 2
	})
	if st := mia.status(); !st.Connected || st.LastSynced.IsZero() || st.Waiting != 0 {
		t.Errorf("mia's status: %+v", st)
	}

	t.Logf("tokens issued: %d; drill passed %v; online outcome: %s; offline: %+v", len(tokens.issued()), rep.Passed, done.Outcome.Words, offline.Waiting)
	// No secret of any machine reached the database.
	for _, m := range []*machine{lea, mia, ned} {
		scanForSecrets(t, pg, db, m, tokens.issued())
	}
}

// waitRequest waits until request uid has status, and returns it.
func waitRequest(t *testing.T, lead *team.Lead, uid, status string) team.RequestView {
	t.Helper()
	var got team.RequestView
	waitFor(t, "request "+uid+" to be "+status, func() bool {
		reqs, err := lead.Requests(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs {
			if r.UID == uid {
				got = r
			}
		}
		if got.Status != team.StatusPending && got.Status != status {
			t.Fatalf("request %s: %s (%+v)", uid, got.Status, got.Outcome)
		}
		return got.Status == status
	})
	return got
}

// TestForgedRequestsAreRefused: the database's own administrators can
// insert a request (they bypass row-level security), but a member acts
// only on what the founding lead's key signed: a forged request is
// answered "refused" and nothing is revoked; a genuine request replayed
// under its own id after it was answered is not acted on again.
func TestForgedRequestsAreRefused(t *testing.T) {
	w := newPair(t, pgtest.Shared(t))
	pg, db, lea, mia, az, lead := w.pg, w.db, w.lea, w.mia, w.az, w.lead
	ctx := context.Background()

	su, err := pgx.Connect(ctx, pg.SuperuserURL(db.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	miaID := mia.creds().Machine
	if _, err := su.Exec(ctx, `INSERT INTO team_revocation_requests (request_uid, machine_id, row_id, row_connected_at, reason, request_signature, requested_by)
		VALUES ('rq-forged', $1, $2, now(), 'forged', 'AAAA', $3)`, miaID, az, lea.creds().Machine); err != nil {
		t.Fatal(err)
	}
	forged := waitRequest(t, lead, "rq-forged", team.StatusRefused)
	if !forged.Verified || !strings.Contains(forged.Outcome.Words, "not signed by the team's founding lead key") {
		t.Fatalf("the forged request's answer: %+v", forged.Outcome)
	}
	if v, _ := mia.custody().Authorization(az); v.State != oauth.StateActive {
		t.Fatalf("a forged request revoked the authorization: %s", v.State)
	}

	// A genuine request, answered, then replayed as it was: the machine
	// reads it again (the row says pending) and does not act on it twice.
	req, err := lead.RequestRevocation(ctx, mia.host, az, "genuine")
	if err != nil {
		t.Fatal(err)
	}
	waitRequest(t, lead, req.UID, team.StatusDone)
	var replayedAt time.Time
	if err := su.QueryRow(ctx, `UPDATE team_revocation_requests SET status = 'pending', outcome_json = NULL, answered_at = NULL
		WHERE request_uid = $1 RETURNING now()`, req.UID).Scan(&replayedAt); err != nil {
		t.Fatal(err)
	}
	mia.addCredential("wakes the syncer")
	waitFor(t, "a whole sync after the replay", func() bool {
		return superCount(t, pg, db, `SELECT count(*) FROM team_machines WHERE machine_id = $1 AND last_sync_at > $2`, miaID, replayedAt) == 1
	})
	if n := superCount(t, pg, db, `SELECT count(*) FROM team_revocation_requests WHERE request_uid = $1 AND status = 'pending'`, req.UID); n != 1 {
		t.Fatal("the replayed request was answered a second time")
	}
}
