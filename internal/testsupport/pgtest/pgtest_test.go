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
