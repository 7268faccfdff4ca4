//go:build unix

package team

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// adminConn logs in as a fresh database's administrative role, with the
// team's group roles made as Create makes them.
func adminConn(t *testing.T) (*pgx.Conn, roles) {
	t.Helper()
	_, db, admin := newDatabase(t)
	ctx := context.Background()
	c, err := connect(ctx, db, admin, adminSecret())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	r := rolesOf(newTeamID())
	for _, stmt := range []string{`CREATE ROLE ` + ident(r.member) + ` NOLOGIN`, `CREATE ROLE ` + ident(r.lead) + ` NOLOGIN`} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return c, r
}

func tables(ctx context.Context, t *testing.T, c *pgx.Conn) map[string]bool {
	t.Helper()
	rows, err := c.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// TestMigrateAnEmptyDatabase: every step runs once, in order; every table
// has row-level security enabled and forced; a second run changes
// nothing.
func TestMigrateAnEmptyDatabase(t *testing.T) {
	c, r := adminConn(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := migrate(ctx, c, r, 0); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := databaseVersion(ctx, c); err != nil || v != SchemaVersion {
		t.Fatalf("version %d, %v", v, err)
	}
	if n := count(ctx, t, c, `SELECT count(*) FROM team_schema_migrations`); n != len(migrations) {
		t.Fatalf("%d steps recorded, want %d", n, len(migrations))
	}
	rows, err := c.Query(ctx, `SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class
		WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND relname LIKE 'team\_%' AND relname <> 'team_schema_migrations'`)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var name string
		var on, forced bool
		if err := rows.Scan(&name, &on, &forced); err != nil {
			t.Fatal(err)
		}
		seen++
		if !on || !forced {
			t.Errorf("%s: row-level security enabled %v, forced %v", name, on, forced)
		}
	}
	if seen != 9 {
		t.Fatalf("%d team tables", seen)
	}
}

// TestMigrateFromThePreviousVersion: a database left at the previous
// version, with a team, a machine and shared rows in it, gains the last
// step's tables and keeps everything it held.
func TestMigrateFromThePreviousVersion(t *testing.T) {
	c, r := adminConn(t)
	ctx := context.Background()
	prev := SchemaVersion - 1
	if err := migrate(ctx, c, r, prev); err != nil {
		t.Fatal(err)
	}
	if v, _ := databaseVersion(ctx, c); v != prev {
		t.Fatalf("left at %d, want %d", v, prev)
	}
	if tables(ctx, t, c)["team_witness_refusals"] {
		t.Fatal("the previous version already has the last step's table")
	}
	for _, stmt := range []string{
		`INSERT INTO team_info (id, team_id, name, founding_lead_key) VALUES (1, '` + r.team + `', 'platform', 'k')`,
		`INSERT INTO team_machines (machine_id, member, kind, hostname, public_key) VALUES ('m1', 'mia', 'member', 'h', 'k')`,
	} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := rawRow(ctx, c, "m1", "az-1"); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, c, r, 0); err != nil {
		t.Fatal(err)
	}
	if v, _ := databaseVersion(ctx, c); v != SchemaVersion {
		t.Fatalf("after migrating: version %d", v)
	}
	if !tables(ctx, t, c)["team_witness_refusals"] {
		t.Fatal("the last step's table is missing")
	}
	if n := count(ctx, t, c, `SELECT count(*) FROM team_rows WHERE machine_id = 'm1' AND row_id = 'az-1'`); n != 1 {
		t.Fatalf("the row before the migration: %d", n)
	}
	if _, err := c.Exec(ctx, `INSERT INTO team_revocation_requests (request_uid, machine_id, row_id, row_connected_at, reason, request_signature)
		VALUES ('u', 'm1', 'az-1', now(), 'r', 's')`); err != nil {
		t.Fatalf("a request for the old machine: %v", err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO team_witness_refusals (machine_id, log_id, witness, witness_size, reason, size, checkpoint, signature)
		VALUES ('m1', 'log', 'w', 40, 'rollback', 20, 'c', 's')`); err != nil {
		t.Fatalf("the new table takes a refusal of the old machine's log: %v", err)
	}
}

// TestConcurrentMigrations: two administrative sessions migrating one
// database at once take turns, and each step runs once.
func TestConcurrentMigrations(t *testing.T) {
	_, db, admin := newDatabase(t)
	ctx := context.Background()
	r := rolesOf(newTeamID())
	first, err := connect(ctx, db, admin, adminSecret())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close(ctx)
	for _, stmt := range []string{`CREATE ROLE ` + ident(r.member) + ` NOLOGIN`, `CREATE ROLE ` + ident(r.lead) + ` NOLOGIN`} {
		if _, err := first.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := connect(ctx, db, admin, adminSecret())
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close(ctx)
			errs[i] = migrate(ctx, c, r, 0)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, first, `SELECT count(*) FROM team_schema_migrations`); n != len(migrations) {
		t.Fatalf("%d steps recorded", n)
	}
}
