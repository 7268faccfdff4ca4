//go:build unix

package team_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

// superCount counts as the cluster's superuser, who sees every row.
func superCount(t *testing.T, pg *pgtest.Server, db team.Database, sql string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pg.SuperuserURL(db.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDatabaseStoppedMidSync: the database stops while a member's
// syncer is sending sixty new rows; the member keeps working offline (its
// inventory and edits, queued in its outbox) and says it is not
// connected; once the database is back every row is there once, each
// with its newest version, and a request made after the restart reaches
// the member through its new connection.
func TestDatabaseStoppedMidSync(t *testing.T) {
	w := newPair(t, pgtest.Start(t))
	pg, db, mia := w.pg, w.db, w.mia
	ctx := context.Background()
	rowsOf := func() int {
		return superCount(t, pg, db, `SELECT count(*) FROM team_rows WHERE machine_id = $1 AND NOT deleted`, mia.creds().Machine)
	}

	var ids []string
	for i := range 60 {
		ids = append(ids, mia.addCredential(fmt.Sprintf("key %02d", i)))
		if i == 5 {
			waitFor(t, "the sync under way", func() bool { return rowsOf() > 1 })
			pg.Stop()
		}
	}
	inv := mia.k.State().Inventory
	for i := 1; i <= 3; i++ {
		if err := inv.SetField(ctx, ids[0], inventory.FieldOwner, fmt.Sprintf("owner-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "mia to say she is offline", func() bool {
		st := mia.status()
		return !st.Connected && st.Waiting > 0 && st.Problem != ""
	})
	pg.Restart(t)
	// Nothing lost: every row arrives, each in its newest version (the
	// collector may still be reading the last additions when the outbox
	// first runs empty, so the rows are waited for, within the bound).
	waitFor(t, "all 61 of mia's rows, the edited one in its newest version", func() bool {
		return rowsOf() == 61 && superCount(t, pg, db, `SELECT count(*) FROM team_rows WHERE row_id = $1 AND owner = 'owner-3'`, ids[0]) == 1
	})
	waitFor(t, "mia's outbox to empty", func() bool { st := mia.status(); return st.Connected && st.Waiting == 0 })
	if n := superCount(t, pg, db, `SELECT count(DISTINCT seq) FROM team_rows WHERE machine_id = $1`, mia.creds().Machine); n != 61 {
		t.Fatalf("rows share a version: %d distinct of 61", n)
	}
	// The lead's session ended with the server: a new one.
	lead, err := team.OpenLead(ctx, w.lea.creds())
	if err != nil {
		t.Fatal(err)
	}
	defer lead.Close()
	req, err := lead.RequestRevocation(ctx, mia.host, w.az, "after the restart")
	if err != nil {
		t.Fatal(err)
	}
	waitRequest(t, lead, req.UID, team.StatusDone)
	if n := superCount(t, pg, db, `SELECT count(*) FROM team_revocation_requests WHERE answered_at IS NOT NULL`); n != 1 {
		t.Fatalf("%d answers", n)
	}
}

// TestClockFarOff: a member whose clock is a year behind still shares its
// rows, its edits still replace the older versions (the order is the
// outbox's, not a time), its requests are still answered, and the lead
// sees how far off its clock is and when it synced on the database's
// clock.
func TestClockFarOff(t *testing.T) {
	w := newPair(t, pgtest.Shared(t))
	mia, lead, az := w.mia, w.lead, w.az
	ctx := context.Background()
	// The keeper runs the syncer on the system clock; this machine's runs
	// on a clock a year behind, over the same inventory and custody.
	mia.withoutSyncer()
	s := mia.startSyncer(func() time.Time { return time.Now().AddDate(-1, 0, 0) })
	k := mia.k
	if err := k.State().Inventory.SetField(ctx, az, inventory.FieldBackupRevoker, "carol"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the edit at the lead", func() bool {
		rows, _, err := lead.Rows(ctx, team.RowFilter{Machine: mia.host})
		return err == nil && len(rows) == 1 && rows[0].Row.BackupRevoker == "carol"
	})
	req, err := lead.RequestRevocation(ctx, mia.host, az, "clock test")
	if err != nil {
		t.Fatal(err)
	}
	waitRequest(t, lead, req.UID, team.StatusDone)
	machines, err := lead.Machines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range machines {
		if m.Hostname != mia.host {
			continue
		}
		year := 365 * 24 * time.Hour.Seconds()
		if m.ClockSkewSeconds == nil || math.Abs(*m.ClockSkewSeconds+year) > 3*24*3600 || m.LastSync == nil || time.Since(*m.LastSync) > time.Hour {
			t.Fatalf("the lead sees mia's clock off by %v, last sync %v", m.ClockSkewSeconds, m.LastSync)
		}
	}
	if st := s.Status(); time.Since(st.LastSynced) > time.Hour {
		t.Fatalf("last synced %v is not on the database's clock", st.LastSynced)
	}
}

// TestRemovedMemberSyncerStops: once the lead removes a member, its
// syncer can no longer log in and says so; what it changes afterwards
// never reaches the team's tables.
func TestRemovedMemberSyncerStops(t *testing.T) {
	pg := pgtest.Shared(t)
	db, admin := teamDatabase(t, pg)
	ctx := context.Background()
	lea, ned := newMachine(t, "lea-laptop"), newMachine(t, "ned-pc")
	createTeam(t, lea, db, admin)
	invite(t, lea, ned, "ned")
	ned.addCredential("before")
	nedID := ned.creds().Machine
	waitFor(t, "ned's row", func() bool {
		return superCount(t, pg, db, `SELECT count(*) FROM team_rows WHERE machine_id = $1`, nedID) == 1
	})
	a, err := team.OpenAdmin(ctx, lea.creds())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Remove(ctx, "ned"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	ned.addCredential("after")
	ned.k.Team().Collect()
	waitFor(t, "ned's syncer to say it was refused", func() bool {
		st := ned.status()
		return !st.Connected && st.Waiting > 0 && strings.Contains(st.Problem, "refused this machine's login")
	})
	if n := superCount(t, pg, db, `SELECT count(*) FROM team_rows WHERE machine_id = $1`, nedID); n != 1 {
		t.Fatalf("%d of ned's rows after the removal", n)
	}
}

// TestRequestForAnEarlierConnection: a request names the connection the
// lead saw. When its owner revoked and connected the authorization again
// before the request reached the machine (a reconnection keeps the
// authorization's id), the machine refuses the request and the new grant
// stays in service: a request withheld and delivered late cannot cut off
// a grant nobody asked about.
func TestRequestForAnEarlierConnection(t *testing.T) {
	w := newPair(t, pgtest.Shared(t))
	mia, lead, az := w.mia, w.lead, w.az
	ctx := context.Background()
	connected, _ := mia.custody().Authorization(az)
	// Mia's Yett goes on without sharing, as a laptop that is offline,
	// while the lead asks and mia reconnects.
	mia.withoutSyncer()
	k := mia.k
	req, err := lead.RequestRevocation(ctx, mia.host, az, "before the reconnection")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.State().OAuth.Revoke(ctx, az); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new second on the clock", func() bool { return time.Now().Unix() > connected.ConnectedAt.Unix() })
	if _, err := k.State().OAuth.Reconnect(ctx, az); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reconnection", func() bool {
		v, _ := k.State().OAuth.Authorization(az)
		return v.State == oauth.StateActive && v.ConnectedAt.After(connected.ConnectedAt)
	})
	mia.startSyncer(nil)
	got := waitRequest(t, lead, req.UID, team.StatusRefused)
	if !strings.Contains(got.Outcome.Words, "connected again") {
		t.Fatalf("the answer: %q", got.Outcome.Words)
	}
	if v, _ := k.State().OAuth.Authorization(az); v.State != oauth.StateActive {
		t.Fatalf("the new grant: %s", v.State)
	}
}
