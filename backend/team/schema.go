package team

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migration is one numbered step of the team database's schema. A
// released step is never edited: databases already ran it. Each runs in a
// transaction of its own that also records it in team_schema_migrations,
// so a crash leaves the database at the previous version or at this one.
type migration struct {
	version int
	name    string
	up      func(r roles) []string
}

// SchemaVersion is the version this Yett's team database has once
// migrated.
var SchemaVersion = migrations[len(migrations)-1].version

var migrations = []migration{
	{1, "team, machines and invitations", joiningSchema},
	{2, "shared inventory, drills and checkpoints", sharedSchema},
	{3, "revocation requests", requestSchema},
	{4, "witness refusals", refusalSchema},
}

// migrate brings the database up to SchemaVersion (or to upto, when it is
// not 0: tests leave a database at an older version). It runs as the
// administrative role, which owns every table. Two migrators at once take
// turns.
func migrate(ctx context.Context, c querier, r roles, upto int) error {
	// Two first migrators would both create the migrations table: a lock
	// of the database's own (advisory, released at the end) orders them.
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("team: %w", err)
	}
	defer c.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	if _, err := c.Exec(ctx, `CREATE TABLE IF NOT EXISTS team_schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("team: the migrations table: %w", err)
	}
	// Machines read the version, to say when theirs needs a newer
	// database.
	for _, stmt := range []string{`REVOKE ALL ON team_schema_migrations FROM PUBLIC`,
		`GRANT SELECT ON team_schema_migrations TO ` + ident(r.member) + `, ` + ident(r.lead)} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("team: the migrations table: %w", err)
		}
	}
	for _, m := range migrations {
		if upto != 0 && m.version > upto {
			break
		}
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			var done bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM team_schema_migrations WHERE version = $1)`, m.version).Scan(&done); err != nil || done {
				return err
			}
			for _, stmt := range m.up(r) {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO team_schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("team: migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

// migrationLock is the advisory lock key migrations take ("yett-tm").
const migrationLock int64 = 0x7965_7474_2d74_6d

// databaseVersion is the highest migration the database ran (0: none).
func databaseVersion(ctx context.Context, c querier) (int, error) {
	var v int
	err := c.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM team_schema_migrations`).Scan(&v)
	return v, err
}

// secure is what every table gets: nobody but its owner and the policies'
// roles reaches it, and row-level security applies to the owner as well
// (FORCE), so a policy is the only way to a row.
func secure(table string) []string {
	return []string{
		`REVOKE ALL ON ` + table + ` FROM PUBLIC`,
		`ALTER TABLE ` + table + ` ENABLE ROW LEVEL SECURITY`,
		`ALTER TABLE ` + table + ` FORCE ROW LEVEL SECURITY`,
		// The owner (the administrative role) administers: it invites,
		// removes and migrates.
		`CREATE POLICY owner_all ON ` + table + ` TO CURRENT_USER USING (true) WITH CHECK (true)`,
	}
}

// joiningSchema: the team, its machines and its invitations.
//
// A machine's id is its login role's name, so "this machine's rows" is
// machine_id = current_user in every policy. A role registers its machine
// only while it holds an unused, unexpired invitation, and only as the
// member and kind the invitation names.
func joiningSchema(r roles) []string {
	m, l := ident(r.member), ident(r.lead)
	out := []string{
		`CREATE TABLE team_info (
			id integer PRIMARY KEY CHECK (id = 1),
			team_id text NOT NULL,
			name text NOT NULL,
			founding_lead_key text NOT NULL,
			created_at timestamptz NOT NULL DEFAULT now())`,
		`CREATE TABLE team_invitations (
			id text PRIMARY KEY,
			role_name text NOT NULL UNIQUE,
			member text NOT NULL,
			kind text NOT NULL CHECK (kind IN ('member', 'lead')),
			code_hash bytea NOT NULL,
			created_by text NOT NULL DEFAULT current_user,
			created_at timestamptz NOT NULL DEFAULT now(),
			expires_at timestamptz NOT NULL,
			used_at timestamptz,
			withdrawn_at timestamptz)`,
		`CREATE TABLE team_machines (
			machine_id text PRIMARY KEY,
			member text NOT NULL,
			kind text NOT NULL CHECK (kind IN ('member', 'lead')),
			hostname text NOT NULL,
			public_key text NOT NULL,
			joined_at timestamptz NOT NULL DEFAULT now(),
			removed_at timestamptz,
			last_sync_at timestamptz,
			clock_skew_seconds double precision,
			yett_version text NOT NULL DEFAULT '')`,
	}
	for _, t := range []string{"team_info", "team_invitations", "team_machines"} {
		out = append(out, secure(t)...)
	}
	return append(out,
		`GRANT SELECT ON team_info TO `+m+`, `+l,
		`CREATE POLICY read_team ON team_info FOR SELECT TO `+m+`, `+l+` USING (true)`,

		`GRANT SELECT, UPDATE (used_at) ON team_invitations TO `+m,
		`GRANT SELECT ON team_invitations TO `+l,
		`CREATE POLICY own_invitation ON team_invitations FOR SELECT TO `+m+` USING (role_name = current_user)`,
		`CREATE POLICY use_invitation ON team_invitations FOR UPDATE TO `+m+`
			USING (role_name = current_user AND used_at IS NULL AND withdrawn_at IS NULL AND expires_at > now())
			WITH CHECK (role_name = current_user)`,
		`CREATE POLICY lead_reads_invitations ON team_invitations FOR SELECT TO `+l+` USING (true)`,

		`GRANT SELECT, INSERT (machine_id, member, kind, hostname, public_key, yett_version) ON team_machines TO `+m,
		`GRANT UPDATE (hostname, last_sync_at, clock_skew_seconds, yett_version) ON team_machines TO `+m,
		`GRANT SELECT ON team_machines TO `+l,
		`CREATE POLICY own_machine ON team_machines FOR SELECT TO `+m+` USING (machine_id = current_user)`,
		`CREATE POLICY register_machine ON team_machines FOR INSERT TO `+m+` WITH CHECK (
			machine_id = current_user AND EXISTS (SELECT 1 FROM team_invitations i WHERE i.role_name = current_user
				AND i.member = team_machines.member AND i.kind = team_machines.kind
				AND i.used_at IS NULL AND i.withdrawn_at IS NULL AND i.expires_at > now()))`,
		`CREATE POLICY update_machine ON team_machines FOR UPDATE TO `+m+`
			USING (machine_id = current_user) WITH CHECK (machine_id = current_user)`,
		`CREATE POLICY lead_reads_machines ON team_machines FOR SELECT TO `+l+` USING (true)`,
	)
}

// ownRows: a member's machine reads and writes its own rows of table; a
// lead reads every row.
func ownRows(r roles, table string, updatable bool) []string {
	m, l := ident(r.member), ident(r.lead)
	privs := "SELECT, INSERT"
	if updatable {
		privs += ", UPDATE"
	}
	out := append(secure(table),
		`GRANT `+privs+` ON `+table+` TO `+m,
		`GRANT SELECT ON `+table+` TO `+l,
		`CREATE POLICY own_rows_read ON `+table+` FOR SELECT TO `+m+` USING (machine_id = current_user)`,
		`CREATE POLICY own_rows_insert ON `+table+` FOR INSERT TO `+m+` WITH CHECK (machine_id = current_user)`,
		`CREATE POLICY lead_reads ON `+table+` FOR SELECT TO `+l+` USING (true)`,
	)
	if updatable {
		out = append(out, `CREATE POLICY own_rows_update ON `+table+` FOR UPDATE TO `+m+`
			USING (machine_id = current_user) WITH CHECK (machine_id = current_user)`)
	}
	return out
}
