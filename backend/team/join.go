package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/vault"
)

// joinOptions are what Create hands its own join.
type joinOptions struct {
	key           *SigningKey // nil: the machine gets a new one
	hostname      string
	version       string
	teamName      string
	adminRole     string
	adminPassword *vault.Secret
}

// Join joins this machine to the team inv names: it checks the database is
// that team (its id, and the founding lead key the code's fingerprint
// names), makes the machine's team signing key, registers the machine and
// its public key, marks the invitation used and sets the role's password
// to a fresh one, in one transaction. keep seals the credentials in the
// vault before that transaction commits: a crash in between leaves a vault
// whose password the database does not know yet and an invitation still
// unused, and joining again with the same code mends it.
//
// Errors: ErrUnreachable (the code's role cannot log in: used, removed, or
// the database is elsewhere), ErrWrongTeam, ErrInvitationUsed.
func Join(ctx context.Context, inv *Invitation, hostname, version string, keep func(*Credentials) error) (*Credentials, error) {
	return join(ctx, inv, joinOptions{hostname: hostname, version: version}, keep)
}

func join(ctx context.Context, inv *Invitation, o joinOptions, keep func(*Credentials) error) (*Credentials, error) {
	o.hostname = strings.TrimSpace(o.hostname)
	if o.hostname == "" || len(o.hostname) > 253 || strings.ContainsAny(o.hostname, "\x00\r\n\t") {
		o.hostname = "unnamed"
	}
	c, err := connect(ctx, inv.Database, inv.Role, &inv.Password)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	var teamID, name, leadKey string
	err = c.QueryRow(ctx, `SELECT team_id, name, founding_lead_key FROM team_info WHERE id = 1`).Scan(&teamID, &name, &leadKey)
	if err != nil {
		return nil, fmt.Errorf("%w: it holds no team this invitation can read", ErrWrongTeam)
	}
	if teamID != inv.TeamID || Fingerprint(leadKey) != inv.LeadKey {
		return nil, ErrWrongTeam
	}
	key := o.key
	if key == nil {
		var seed vault.Secret
		key, seed = newSigningKey()
		seed.Wipe()
	}
	creds := &Credentials{Membership: Membership{TeamID: teamID, TeamName: name, Database: inv.Database, Machine: inv.Role,
		Member: inv.Member, Kind: inv.Kind, Hostname: o.hostname, PublicKey: key.Public(), FoundingLeadKey: leadKey,
		AdminRole: o.adminRole}, password: newPassword(), key: key}
	if o.adminPassword != nil {
		creds.adminPassword = vault.NewSecret(o.adminPassword.Bytes())
	}
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO team_machines (machine_id, member, kind, hostname, public_key, yett_version)
			VALUES (current_user, $1, $2, $3, $4, $5)`, inv.Member, inv.Kind, o.hostname, key.Public(), o.version)
		if sqlState(err) == "42501" || sqlState(err) == "23505" {
			return ErrInvitationUsed
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE team_invitations SET used_at = now() WHERE id = $1 AND role_name = current_user AND used_at IS NULL`, inv.ID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return ErrInvitationUsed
		}
		if _, err := tx.Exec(ctx, `ALTER ROLE CURRENT_USER PASSWORD `+literal(scramVerifier(&creds.password))); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT now()`).Scan(&creds.JoinedAt); err != nil {
			return err
		}
		creds.JoinedAt = creds.JoinedAt.UTC()
		return keep(creds)
	})
	if err != nil {
		creds.Wipe()
		if errors.Is(err, ErrInvitationUsed) {
			return nil, err
		}
		return nil, fmt.Errorf("team: joining: %w", err)
	}
	return creds, nil
}

// sqlState is a PostgreSQL error's SQLSTATE, "" for any other error.
func sqlState(err error) string {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		return pe.SQLState()
	}
	return ""
}

// Keep is the usual keep function: it seals the credentials in the vault
// as a new membership.
func Keep(t *vault.Team) func(*Credentials) error {
	return func(c *Credentials) error { return save(t, c, vault.ChangeTeamJoined) }
}

// now is the database's clock: times the team shares are the server's,
// so a machine whose clock is far off still orders them right.
func now(ctx context.Context, q querier) (time.Time, error) {
	var t time.Time
	err := q.QueryRow(ctx, `SELECT now()`).Scan(&t)
	return t.UTC(), err
}
