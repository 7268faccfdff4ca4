//go:build unix

package team

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/vault"
)

// The figures for the team core, on a real PostgreSQL on loopback:
// 500 simulated machines of 20 rows each coming online and syncing, the
// lead's first page over their 10,000 rows, and how long a revocation
// request takes to reach a connected machine. A simulated machine is the
// real Syncer (outbox, signing, connection, upserts) over a fixed list of
// rows in place of a keeper's inventory, which would add a vault and an
// audit log per machine and measure those instead.
//
//	go test -run '^$' -bench . -benchtime 1x ./backend/team/

// benchEpoch is the simulated machines' "now": fixed, so a row's
// connected-at is the same on every read (a request names it).
var benchEpoch = time.Now().UTC().Truncate(time.Second)

// simInventory is a simulated machine's inventory: n rows, each an OAuth
// authorization, whose owner carries a version so a new run shares every
// row again.
type simInventory struct {
	host    string
	n       int
	version atomic.Int64
	ready   atomic.Bool
}

func (s *simInventory) Rows(context.Context, inventory.Filter) ([]inventory.Row, error) {
	v := s.version.Load()
	rows := make([]inventory.Row, s.n)
	now := benchEpoch
	for i := range rows {
		rows[i] = inventory.Row{ID: fmt.Sprintf("az-%s-%02d", s.host, i), Kind: inventory.KindOAuth, Name: fmt.Sprintf("%s service %02d", s.host, i),
			Provider: "auth.example.com", AccountRef: "svc@example.com", Scopes: []string{"read"}, Environment: "production",
			HeldOn: "this machine (" + s.host + ")", Owner: fmt.Sprintf("owner-%d", v), BackupRevoker: "backup", CreatedVia: "client_credentials",
			ConnectedAt: now.AddDate(0, -1, 0), ReviewBy: now.AddDate(0, 0, i%7-3), NextDrill: now.AddDate(0, 0, i%5-2), DrillEveryDays: 90,
			DrillKind: inventory.DrillUnattended, State: "active", Controlled: i%4 != 0, Missing: []string{}, Operations: []string{"svc.read"}}
	}
	return rows, nil
}

func (s *simInventory) Drills(string, int) ([]inventory.Report, error)   { return nil, nil }
func (s *simInventory) Subscribe(func(inventory.Change)) (cancel func()) { return func() {} }

// revokeNow is a provider that answers at once: the figure is the team's
// path, not a provider's.
type revokeNow struct{ calls chan string }

func (r revokeNow) Revoke(_ context.Context, id string) (oauth.RevokeReport, error) {
	r.calls <- id
	return oauth.RevokeReport{AuthorizationID: id, Steps: []oauth.RevokeStep{{Step: oauth.StepLocalDisable, OK: true}}}, nil
}

// simTeam is a team of n simulated machines.
type simTeam struct {
	tt       *testTeam
	machines []*Credentials
	invs     []*simInventory
}

func newSimTeam(b *testing.B, n, rows int) *simTeam {
	b.Helper()
	tt := newTestTeam(b)
	st := &simTeam{tt: tt}
	for i := range n {
		host := fmt.Sprintf("sim-%03d", i)
		st.machines = append(st.machines, tt.join(fmt.Sprintf("member-%03d", i), KindMember, host))
		st.invs = append(st.invs, &simInventory{host: host, n: rows})
	}
	return st
}

// startAll starts every machine's syncer, each with a fresh outbox, and
// returns them once started (they log in and share on their own).
func (st *simTeam) startAll(b *testing.B) []*Syncer {
	b.Helper()
	syncers := make([]*Syncer, len(st.machines))
	var wg sync.WaitGroup
	for i, c := range st.machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			creds := *c
			creds.password = vault.NewSecret(c.password.Bytes())
			creds.key = &SigningKey{priv: append([]byte(nil), c.key.priv...)}
			inv := st.invs[i]
			s, err := Start(Config{DataDir: b.TempDir(), Inventory: inv, Ready: inv.ready.Load, MinBackoff: 100 * time.Millisecond}, &creds)
			if err != nil {
				b.Error(err)
				return
			}
			syncers[i] = s
		}()
	}
	wg.Wait()
	return syncers
}

// waitRows waits until the database holds every row in version.
func (st *simTeam) waitRows(b *testing.B, version int64) {
	b.Helper()
	su := st.tt.superuser()
	want := len(st.machines) * st.invs[0].n
	owner := fmt.Sprintf("owner-%d", version)
	for {
		var n int
		if err := su.QueryRow(context.Background(), `SELECT count(*) FROM team_rows WHERE owner = $1`, owner).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (st *simTeam) setVersion(v int64, ready bool) {
	for _, inv := range st.invs {
		inv.version.Store(v)
		inv.ready.Store(ready)
	}
}

func closeAll(syncers []*Syncer) {
	for _, s := range syncers {
		if s != nil {
			s.Close()
		}
	}
}

// syncAll is one cold sync: every machine starts (a new outbox, a login)
// with its rows to share; it returns the time until the database holds
// all of them.
func (st *simTeam) syncAll(b *testing.B, version int64) time.Duration {
	b.Helper()
	st.setVersion(version, true)
	start := time.Now()
	syncers := st.startAll(b)
	st.waitRows(b, version)
	took := time.Since(start)
	closeAll(syncers)
	return took
}

// BenchmarkFullSync500x20: 500 machines of 20 rows each share every row.
// cold: they all start at once, each making its outbox on this one disk
// (500 SQLite files, which a real team spreads over 500 disks), logging in
// (SCRAM) and sending; resync: they are connected, and every row of every
// machine changes at once.
func BenchmarkFullSync500x20(b *testing.B) {
	st := newSimTeam(b, benchMachines(), 20)
	b.Run("cold", func(b *testing.B) {
		var total time.Duration
		for i := range b.N {
			total += st.syncAll(b, int64(i+1))
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "s/full-sync")
		b.ReportMetric(float64(len(st.machines)*20*b.N)/total.Seconds(), "rows/s")
	})
	b.Run("resync", func(b *testing.B) {
		st.setVersion(1000, false)
		syncers := st.startAll(b)
		defer closeAll(syncers)
		for _, s := range syncers {
			for !s.Status().Connected {
				time.Sleep(10 * time.Millisecond)
			}
		}
		b.ResetTimer()
		var total time.Duration
		for i := range b.N {
			v := int64(1001 + i)
			st.setVersion(v, true)
			start := time.Now()
			for _, s := range syncers {
				s.Collect()
			}
			st.waitRows(b, v)
			total += time.Since(start)
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "s/full-sync")
		b.ReportMetric(float64(len(st.machines)*20*b.N)/total.Seconds(), "rows/s")
	})
}

// benchMachines is the team size, 500 machines; -short (make
// test's run of every benchmark once, which only checks they still run)
// takes 25, which exercises the same code in a few seconds. The figures
// come from make bench, without -short.
func benchMachines() int {
	if testing.Short() {
		return 25
	}
	return 500
}

// BenchmarkLeadFirstPage: the lead's first page (100 rows, by name) over
// 10,000 rows of 500 machines, with each row's signature checked; and the
// same page filtered to rows not under control.
func BenchmarkLeadFirstPage(b *testing.B) {
	st := newSimTeam(b, benchMachines(), 20)
	st.syncAll(b, 1)
	b.ResetTimer()
	lead, err := OpenLead(context.Background(), st.tt.lead)
	if err != nil {
		b.Fatal(err)
	}
	defer lead.Close()
	for _, c := range []struct {
		name string
		f    RowFilter
	}{
		{"all", RowFilter{}},
		{"not_under_control", RowFilter{Filter: inventory.Filter{State: inventory.FilterUncontrolled}}},
		{"drill_overdue", RowFilter{Filter: inventory.Filter{State: inventory.FilterDrillOverdue}}},
		{"text", RowFilter{Filter: inventory.Filter{Text: fmt.Sprintf("sim-%03d", len(st.machines)/2)}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				rows, _, err := lead.Rows(context.Background(), c.f)
				if err != nil || len(rows) == 0 {
					b.Fatalf("%d rows, %v", len(rows), err)
				}
			}
		})
	}
}

// BenchmarkRequestReachesOnlineMachine: from the lead's insert of a
// signed request to the connected machine's revocation starting (reach),
// and to its answer being in the database (answered).
func BenchmarkRequestReachesOnlineMachine(b *testing.B) {
	st := newSimTeam(b, 1, 20)
	ctx := context.Background()
	calls := make(chan string, 1)
	creds := st.machines[0]
	st.setVersion(1, true)
	s, err := Start(Config{DataDir: b.TempDir(), Inventory: st.invs[0], Ready: st.invs[0].ready.Load, Revoker: revokeNow{calls}}, creds)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	lead, err := OpenLead(ctx, st.tt.lead)
	if err != nil {
		b.Fatal(err)
	}
	defer lead.Close()
	su := st.tt.superuser()
	for s.Status().Waiting > 0 || !s.Status().Connected {
		time.Sleep(10 * time.Millisecond)
	}
	var reach, answered time.Duration
	b.ResetTimer()
	for i := range b.N {
		row := fmt.Sprintf("az-%s-%02d", st.invs[0].host, i%20)
		start := time.Now()
		req, err := lead.RequestRevocation(ctx, creds.Machine, row, "bench")
		if err != nil {
			b.Fatal(err)
		}
		select {
		case <-calls:
		case <-time.After(time.Minute):
			b.Fatal("the request never reached the machine's revocation")
		}
		reach += time.Since(start)
		for {
			var status string
			if err := su.QueryRow(ctx, `SELECT status FROM team_revocation_requests WHERE request_uid = $1`, req.UID).Scan(&status); err != nil {
				b.Fatal(err)
			}
			if status != StatusPending {
				break
			}
			time.Sleep(time.Millisecond)
		}
		answered += time.Since(start)
	}
	b.ReportMetric(float64(reach.Microseconds())/1000/float64(b.N), "ms-to-reach")
	b.ReportMetric(float64(answered.Microseconds())/1000/float64(b.N), "ms-to-answer")
}
