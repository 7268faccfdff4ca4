//go:build unix

package team

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// adminPassword is the administrative role's password in these tests.
const adminPassword = "CANARY-team-admin-password-41c7"

// testTeam is one PostgreSQL server with an empty team database owned by a
// plain administrative role (LOGIN CREATEROLE, not a superuser: the role a
// team's creator is given), and the team made in it.
type testTeam struct {
	t  testing.TB
	pg *pgtest.Server
	db Database
	// adminRole is the administrative role's name.
	adminRole string
	lead      *Credentials
	admin     *Admin
}

// newDatabase makes an empty database and its administrative role on the
// test binary's shared cluster.
func newDatabase(t testing.TB) (*pgtest.Server, Database, string) {
	t.Helper()
	return newDatabaseOn(t, pgtest.Shared(t))
}

// newDatabaseOn makes them on pg.
func newDatabaseOn(t testing.TB, pg *pgtest.Server) (*pgtest.Server, Database, string) {
	t.Helper()
	ctx := context.Background()
	su, err := pgx.Connect(ctx, pg.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	suffix := randomHex(4)
	admin, name := "yett_admin_"+suffix, "team_"+suffix
	for _, stmt := range []string{
		`CREATE ROLE ` + admin + ` LOGIN CREATEROLE PASSWORD '` + adminPassword + `'`,
		`CREATE DATABASE ` + name + ` OWNER ` + admin,
	} {
		if _, err := su.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return pg, Database{Host: pg.Host, Port: pg.Port, Name: name, SSLMode: "disable"}, admin
}

func adminSecret() *vault.Secret {
	s := vault.NewSecret([]byte(adminPassword))
	return &s
}

// newTestTeam creates a team whose founding lead is "lea".
func newTestTeam(t testing.TB) *testTeam {
	t.Helper()
	pg, db, adminRole := newDatabase(t)
	ctx := context.Background()
	lead, err := Create(ctx, CreateRequest{Database: db, AdminRole: adminRole, AdminPassword: adminSecret(),
		Name: "platform", Member: "lea", Hostname: "lea-laptop", Version: "test"}, func(*Credentials) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lead.Wipe)
	admin, err := OpenAdmin(ctx, lead)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return &testTeam{t: t, pg: pg, db: db, adminRole: adminRole, lead: lead, admin: admin}
}

// join invites member as kind and joins a machine with the code, read back
// from its text as a person would paste it.
func (tt *testTeam) join(member, kind, hostname string) *Credentials {
	tt.t.Helper()
	ctx := context.Background()
	inv, err := tt.admin.Invite(ctx, member, kind, time.Hour)
	if err != nil {
		tt.t.Fatal(err)
	}
	code := inv.Code()
	parsed, err := ParseCode(code.Bytes())
	code.Wipe()
	if err != nil {
		tt.t.Fatal(err)
	}
	c, err := Join(ctx, &parsed, hostname, "test", func(*Credentials) error { return nil })
	if err != nil {
		tt.t.Fatal(err)
	}
	tt.t.Cleanup(c.Wipe)
	return c
}

// conn logs in as c's machine.
func (tt *testTeam) conn(c *Credentials) *pgx.Conn {
	tt.t.Helper()
	conn, err := connect(context.Background(), c.Database, c.Machine, &c.password)
	if err != nil {
		tt.t.Fatal(err)
	}
	tt.t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// superuser connects as the cluster's superuser, to look at what the
// roles cannot.
func (tt *testTeam) superuser() *pgx.Conn {
	tt.t.Helper()
	c, err := pgx.Connect(context.Background(), tt.pg.SuperuserURL(tt.db.Name))
	if err != nil {
		tt.t.Fatal(err)
	}
	tt.t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
