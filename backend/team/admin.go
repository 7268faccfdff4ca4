package team

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/yettdev/yett/backend/vault"
)

// DefaultInvitationTTL is how long an invitation code may be used.
const DefaultInvitationTTL = 7 * 24 * time.Hour

// querier is a connection or a transaction.
type querier interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// CreateRequest is what `yett team create` asks for.
type CreateRequest struct {
	// Database and AdminRole name the database and a role that may CREATE
	// ROLE and owns (or may create tables in) the database.
	Database      Database
	AdminRole     string
	AdminPassword *vault.Secret
	// Name is the team's name; Member names the lead creating it.
	Name     string
	Member   string
	Hostname string
	Version  string
}

// Create makes a team in an empty database: its group roles, its schema
// (every table under forced row-level security), its founding lead key,
// and this machine as its first lead, joined as every member joins. The
// credentials it returns (the lead's role, its signing key and the
// administrative password) are sealed in the vault by keep before the
// join commits. Errors: ErrInvalid, ErrUnreachable, ErrTeamExists.
func Create(ctx context.Context, req CreateRequest, keep func(*Credentials) error) (*Credentials, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" || utf8.RuneCountInString(name) > 100 || strings.ContainsAny(name, "\x00\r\n\t") {
		return nil, fmt.Errorf("%w: a team's name is 1-100 characters on one line", ErrInvalid)
	}
	if err := checkMember(req.Member); err != nil {
		return nil, err
	}
	c, err := connect(ctx, req.Database, req.AdminRole, req.AdminPassword)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	var exists bool
	if err := c.QueryRow(ctx, `SELECT to_regclass('team_info') IS NOT NULL`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	if exists {
		return nil, ErrTeamExists
	}
	r := rolesOf(newTeamID())
	key, seed := newSigningKey()
	seed.Wipe()
	var inv Invitation
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		for _, stmt := range []string{
			`CREATE ROLE ` + ident(r.member) + ` NOLOGIN`,
			`CREATE ROLE ` + ident(r.lead) + ` NOLOGIN`,
			`GRANT CONNECT ON DATABASE ` + ident(req.Database.Name) + ` TO ` + ident(r.member) + `, ` + ident(r.lead),
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		if err := migrate(ctx, tx, r, 0); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO team_info (id, team_id, name, founding_lead_key) VALUES (1, $1, $2, $3)`,
			r.team, name, key.Public()); err != nil {
			return err
		}
		var err error
		inv, err = invite(ctx, tx, req.Database, r, req.Member, KindLead, DefaultInvitationTTL)
		return err
	})
	if err != nil {
		key.Wipe()
		return nil, fmt.Errorf("team: creating the team: %w", err)
	}
	defer inv.Password.Wipe()
	return join(ctx, &inv, joinOptions{key: key, hostname: req.Hostname, version: req.Version, teamName: name,
		adminRole: req.AdminRole, adminPassword: req.AdminPassword}, keep)
}

// Admin is a session of the administrative role, opened with the password
// the founding lead's vault holds: it invites and removes.
type Admin struct {
	c     *pgx.Conn
	db    Database
	roles roles
	lead  string // the lead's own machine, which keeps its role
}

// OpenAdmin logs in as the administrative role. Errors: ErrNotLead (this
// vault holds no administrative password), ErrUnreachable.
func OpenAdmin(ctx context.Context, creds *Credentials) (*Admin, error) {
	if !creds.CanAdminister() {
		return nil, fmt.Errorf("%w: this machine's vault holds no administrative password (only the machine that created the team does)", ErrNotLead)
	}
	c, err := connect(ctx, creds.Database, creds.AdminRole, &creds.adminPassword)
	if err != nil {
		return nil, err
	}
	a := &Admin{c: c, db: creds.Database, roles: rolesOf(creds.TeamID), lead: creds.Machine}
	// A newer Yett's first admin session brings the schema up to date.
	if err := migrate(ctx, c, a.roles, 0); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return a, nil
}

// Close ends the session.
func (a *Admin) Close() error { return a.c.Close(context.Background()) }

// Invite makes a one-time invitation for member as kind (KindMember or
// KindLead), valid for ttl (0: DefaultInvitationTTL): a login role with a
// random password, in the team's group roles, and an invitation row that
// keeps only a hash of the code. The caller wipes the code.
func (a *Admin) Invite(ctx context.Context, member, kind string, ttl time.Duration) (Invitation, error) {
	if err := checkMember(member); err != nil {
		return Invitation{}, err
	}
	if kind != KindMember && kind != KindLead {
		return Invitation{}, fmt.Errorf("%w: invite as member or lead", ErrInvalid)
	}
	if ttl <= 0 {
		ttl = DefaultInvitationTTL
	}
	var inv Invitation
	err := pgx.BeginFunc(ctx, a.c, func(tx pgx.Tx) (err error) {
		inv, err = invite(ctx, tx, a.db, a.roles, member, kind, ttl)
		return err
	})
	return inv, err
}

// invite makes the role and the invitation row in tx.
func invite(ctx context.Context, tx pgx.Tx, db Database, r roles, member, kind string, ttl time.Duration) (Invitation, error) {
	inv := Invitation{TeamID: r.team, Database: db, Role: r.newMachineRole(), Password: newPassword(), ID: "inv-" + randomHex(8),
		Member: member, Kind: kind}
	var leadKey string
	var expires time.Time
	if err := tx.QueryRow(ctx, `SELECT founding_lead_key, now() + make_interval(secs => $1) FROM team_info WHERE id = 1`,
		ttl.Seconds()).Scan(&leadKey, &expires); err != nil {
		inv.Password.Wipe()
		return Invitation{}, fmt.Errorf("team: %w", err)
	}
	inv.LeadKey, inv.ExpiresAt = Fingerprint(leadKey), expires.UTC().Truncate(time.Second)
	groups := ident(r.member)
	if kind == KindLead {
		groups += ", " + ident(r.lead)
	}
	code := inv.Code()
	sum := sha256.Sum256(code.Bytes())
	code.Wipe()
	for _, stmt := range []string{
		// A machine needs a connection for its syncer and one for a
		// command now and then; eight bounds what a stolen code can open.
		`CREATE ROLE ` + ident(inv.Role) + ` LOGIN CONNECTION LIMIT 8 PASSWORD ` + literal(scramVerifier(&inv.Password)) + ` IN ROLE ` + groups,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			inv.Password.Wipe()
			return Invitation{}, fmt.Errorf("team: making the invitee's role: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO team_invitations (id, role_name, member, kind, code_hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		inv.ID, inv.Role, member, kind, sum[:], inv.ExpiresAt); err != nil {
		inv.Password.Wipe()
		return Invitation{}, fmt.Errorf("team: %w", err)
	}
	return inv, nil
}

// Remove takes a machine (by id or host name) or every machine of a
// member (by name), and their unused invitations, out of the team: each
// role can no longer log in, leaves the team's group roles (so it has no
// privilege on any table, even on a connection it still holds) and its
// sessions are ended where the administrative role may end them. Its rows
// stay, marked removed, as the record of what it held. The founding
// lead's own machine cannot be removed this way. Errors: ErrNotFound.
func (a *Admin) Remove(ctx context.Context, who string) ([]string, error) {
	var removed []string
	err := pgx.BeginFunc(ctx, a.c, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT machine_id FROM team_machines WHERE removed_at IS NULL AND (machine_id = $1 OR hostname = $1 OR member = $1)
			UNION SELECT role_name FROM team_invitations WHERE used_at IS NULL AND withdrawn_at IS NULL AND member = $1`, who)
		if err != nil {
			return err
		}
		roles, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, role := range roles {
			if role == a.lead {
				return fmt.Errorf("%w: this is the founding lead's own machine", ErrInvalid)
			}
			if !machinePattern.MatchString(role) {
				continue
			}
			for _, stmt := range []string{
				`ALTER ROLE ` + ident(role) + ` NOLOGIN`,
				`REVOKE ` + ident(a.roles.member) + `, ` + ident(a.roles.lead) + ` FROM ` + ident(role),
			} {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE team_machines SET removed_at = now() WHERE machine_id = $1`, role); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE team_invitations SET withdrawn_at = now() WHERE role_name = $1 AND used_at IS NULL`, role); err != nil {
				return err
			}
			removed = append(removed, role)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	if len(removed) == 0 {
		return nil, ErrNotFound
	}
	for _, role := range removed {
		// Only a superuser or a member of pg_signal_backend may end
		// another role's sessions; without that right a session it
		// still holds has lost every privilege anyway.
		var ended bool
		if err := a.c.QueryRow(ctx, `SELECT coalesce(bool_and(pg_terminate_backend(pid)), true) FROM pg_stat_activity WHERE usename = $1`, role).Scan(&ended); err != nil {
			var pe interface{ SQLState() string }
			if !errors.As(err, &pe) || pe.SQLState() != "42501" {
				return removed, fmt.Errorf("team: %w", err)
			}
		}
	}
	return removed, nil
}
