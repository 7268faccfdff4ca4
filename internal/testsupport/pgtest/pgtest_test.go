//go:build unix

package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartStopRestart: the server answers as the superuser over TCP with
// its password, refuses a wrong one, and keeps its data across a restart.
func TestStartStopRestart(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := c.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 150000 {
		t.Fatalf("server version %d, want 15 or later", version)
	}
	c.Close(ctx)
	if c, err := pgx.Connect(ctx, s.URL(Superuser, "wrong", "")); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password connected")
	}
	s.Stop()
	if c, err := pgx.Connect(ctx, s.SuperuserURL("")); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a stopped server")
	}
	s.Restart(t)
	c, err = pgx.Connect(ctx, s.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var v int
	if err := c.QueryRow(ctx, `SELECT v FROM kept`).Scan(&v); err != nil || v != 7 {
		t.Fatalf("after the restart: %d, %v", v, err)
	}
}

// TestOwnedDatabase: the role logs in to its database with its password,
// owns it (creates a table and a role there), is no superuser, and a
// password with a quote in it is taken as written.
func TestOwnedDatabase(t *testing.T) {
	s := Start(t)
	const pw = "it's-a-test-password"
	role, db := s.OwnedDatabase(t, pw)
	role2, db2 := s.OwnedDatabase(t, pw)
	if role == role2 || db == db2 {
		t.Fatalf("two calls made the same names: %s %s", role, db)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.URL(role, pw, db))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var super bool
	if err := c.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || super {
		t.Fatalf("superuser %v, %v", super, err)
	}
	for _, stmt := range []string{`CREATE TABLE t (x int)`, `CREATE ROLE ` + role + `_m LOGIN`} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := pgx.Connect(ctx, s.URL(role, "wrong", db)); err == nil {
		t.Fatal("a wrong password logged in")
	}
}
