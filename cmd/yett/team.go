//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/version"
)

func init() {
	commands["team"] = command{
		usage:   teamUsage,
		summary: "create a team, invite, join, leave, remove, ask a member's machine to revoke, name the witness, or show the team",
		run:     runTeam,
	}
}

const teamUsage = `usage: yett team create --database postgres://ROLE@HOST[:PORT]/DATABASE --name TEAM --member YOU
       yett team invite --member WHO [--lead] [--expires DURATION]
       yett team join
       yett team status
       yett team remove MACHINE|MEMBER
       yett team revoke MACHINE ROW [--reason TEXT]
       yett team leave
       yett team witness --url URL --key VKEY | --none

Team mode shares this machine's owner inventory (every row, with its owner,
backup revoker, review date and drill schedule), its drill reports (each
step's evidence only as a SHA-256 digest) and its audit checkpoints with a
team, in a PostgreSQL database (15 or later), and answers the lead's
revocation requests. No secret, token, request or response body, argument
value or audit entry ever goes there: credentials stay in each machine's
vault. Each machine logs in with a PostgreSQL role of its own, and
row-level security lets it read and write only its own rows.

create makes the team in an empty database, as the role the URL names,
which must be able to CREATE ROLE and create tables in the database (for
instance its owner). Its password is asked for at the terminal, never
taken from the URL: a command line is readable by every program you run.
Without ?sslmode=verify-full a database must be on this machine's loopback.
This machine becomes the team's founding lead: its vault keeps that role's
password (for invite and remove), a role of its own and the team key that
signs revocation requests, whose fingerprint is shown.

invite makes a one-time invitation code for a member (--lead: one who reads
every machine's rows too), valid for --expires (7 days by default). The code
is shown at the terminal only, once: it logs in to the team database until
it is used, so hand it over as you would a password. join asks for a code at
the terminal (never as an argument), checks the database is the team whose
founding lead key the code names, registers this machine and its signing
key, and replaces the code's password with one only this vault knows: the
code is worthless afterwards.

status says which team this machine is in, when it last synced and what
waits to be sent; on a lead's machine, every machine and every revocation
request with its outcome. remove takes a machine (by id or host name) or
every machine of a member out of the team: its role no longer logs in nor
writes. revoke asks the machine that holds ROW (an authorization id, as
yett accounts lists them) to revoke it: that machine disables it, revokes it
at the provider (RFC 7009), verifies, and writes the evidence back; status
shows the outcome, or where the request waits. leave forgets this
machine's membership: its vault drops the team's credentials and keys, and
the machine shares nothing more (ask the lead to remove it, so its role
stops logging in too).

witness names the team's witness (yett witness serve; --key is what yett
witness key prints, --url where this machine reaches it, usually a tunnel
to its loopback address) or, with --none, forgets it. The app or yett serve
then submits this machine's audit checkpoints to it by itself, after each
checkpoint the log signs and at each vault lock; a witness that cannot be
reached is tried again, less and less often, and nothing is lost meanwhile.

create, invite, join and witness ask for the vault passphrase every time; status,
remove, revoke and leave open the vault with the kernel keyring when it
holds the key. Every command refuses while the app or yett serve runs, and unless
standard input is your own controlling terminal, except status, which only
reads. The app or yett serve does the sharing itself while its vault is
unlocked; these commands only set it up and ask.
`

func runTeam(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, teamUsage)
		return withExitCode(2, errors.New("team: say create, invite, join, status, remove, revoke, leave or witness"))
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "create":
		return teamCreate(ctx, env, rest)
	case "invite":
		return teamInvite(ctx, env, rest)
	case "join":
		if len(rest) != 0 {
			fmt.Fprint(env.Stderr, teamUsage)
			return withExitCode(2, errors.New("team join: the code is asked for at the terminal, never taken as an argument (a command line is readable by every program you run)"))
		}
		return teamJoin(ctx, env)
	case "status":
		return teamStatus(ctx, env)
	case "remove", "revoke":
		return teamLeadAsks(ctx, env, sub, rest)
	case "leave":
		if len(rest) != 0 {
			fmt.Fprint(env.Stderr, teamUsage)
			return withExitCode(2, errors.New("team leave: takes no argument"))
		}
		return teamLeave(ctx, env)
	case "witness":
		return teamWitness(ctx, env, rest)
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, teamUsage)
		return nil
	}
	fmt.Fprint(env.Stderr, teamUsage)
	return withExitCode(2, fmt.Errorf("team: unknown subcommand %q", sub))
}

// teamFlags parses a subcommand's flags; usage problems exit 2.
func teamFlags(env *Env, name string, args []string, define func(fs *flag.FlagSet)) ([]string, error) {
	fs := flag.NewFlagSet("yett team "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	define(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprint(env.Stderr, teamUsage)
		return nil, withExitCode(2, fmt.Errorf("team %s: %v", name, err))
	}
	return fs.Args(), nil
}

func teamCreate(ctx context.Context, env *Env, args []string) error {
	var dbURL, name, member string
	rest, err := teamFlags(env, "create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&dbURL, "database", "", "")
		fs.StringVar(&name, "name", "", "")
		fs.StringVar(&member, "member", "", "")
	})
	if err != nil {
		return err
	}
	if len(rest) != 0 || dbURL == "" || name == "" || member == "" {
		fmt.Fprint(env.Stderr, teamUsage)
		return withExitCode(2, errors.New("team create: --database, --name and --member are required"))
	}
	db, role, err := team.ParseDatabaseURL(dbURL)
	if err != nil {
		return withExitCode(2, fmt.Errorf("team create: %w", err))
	}
	s, err := openSetup(ctx, env, "team create", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	if has, err := s.v.Team().Has(); err != nil || has {
		return errors.New("team create: this machine is in a team already (yett team status)")
	}
	pw, err := s.tty.Secret(ctx, fmt.Sprintf("Password of %s at %s (not shown as you type): ", role, db))
	if err != nil {
		return fmt.Errorf("team create: %w", err)
	}
	secret := vault.NewSecret(pw)
	clear(pw)
	defer secret.Wipe()
	host, _ := os.Hostname()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := team.Create(cctx, team.CreateRequest{Database: db, AdminRole: role, AdminPassword: &secret, Name: name, Member: member,
		Hostname: host, Version: version.String()}, team.Keep(s.v.Team()))
	if err != nil {
		return fmt.Errorf("team create: %w", err)
	}
	defer c.Wipe()
	fmt.Fprintf(env.Stdout, "Created team %q in %s; this machine (%s) is its founding lead.\n", c.TeamName, db, c.Hostname)
	fmt.Fprintf(env.Stdout, "Founding lead key: %s\n", team.Fingerprint(c.PublicKey))
	fmt.Fprintln(env.Stdout, "Invite members with yett team invite; the app or yett serve shares this machine's rows while its vault is unlocked.")
	return s.recorded()
}

func teamInvite(ctx context.Context, env *Env, args []string) error {
	var member string
	var lead bool
	expires := team.DefaultInvitationTTL
	rest, err := teamFlags(env, "invite", args, func(fs *flag.FlagSet) {
		fs.StringVar(&member, "member", "", "")
		fs.BoolVar(&lead, "lead", false, "")
		fs.DurationVar(&expires, "expires", team.DefaultInvitationTTL, "")
	})
	if err != nil {
		return err
	}
	if len(rest) != 0 || member == "" || expires <= 0 || expires > 90*24*time.Hour {
		fmt.Fprint(env.Stderr, teamUsage)
		return withExitCode(2, errors.New("team invite: --member is required, and --expires is at most 90 days (2160h)"))
	}
	kind := team.KindMember
	if lead {
		kind = team.KindLead
	}
	s, err := openSetup(ctx, env, "team invite", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	creds, err := s.teamCredentials()
	if err != nil {
		return err
	}
	defer creds.Wipe()
	admin, err := team.OpenAdmin(ctx, creds)
	if err != nil {
		return fmt.Errorf("team invite: %w", err)
	}
	defer admin.Close()
	inv, err := admin.Invite(ctx, member, kind, expires)
	if err != nil {
		return fmt.Errorf("team invite: %w", err)
	}
	code := inv.Code()
	inv.Password.Wipe()
	defer code.Wipe()
	// The code goes to the terminal, not to standard output: a code in a
	// redirected output would sit in a file.
	s.tty.Printf("Invitation for %s (%s of team %q), valid until %s. Hand it over as you would a password:\n\n%s\n\n",
		member, kind, creds.TeamName, inv.ExpiresAt.Local().Format("2006-01-02 15:04"), code.Bytes())
	s.tty.Printf("The invitee runs yett team join and pastes it; it is checked against the founding lead key %s.\n", team.Fingerprint(creds.FoundingLeadKey))
	return s.recorded()
}

func teamJoin(ctx context.Context, env *Env) error {
	s, err := openSetup(ctx, env, "team join", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	if has, err := s.v.Team().Has(); err != nil || has {
		return errors.New("team join: this machine is in a team already (yett team status)")
	}
	text, err := s.tty.Secret(ctx, "Invitation code (not shown as you type): ")
	if err != nil {
		return fmt.Errorf("team join: %w", err)
	}
	inv, err := team.ParseCode(text)
	clear(text)
	if err != nil {
		return fmt.Errorf("team join: %w", err)
	}
	defer inv.Password.Wipe()
	host, _ := os.Hostname()
	jctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := team.Join(jctx, &inv, host, version.String(), team.Keep(s.v.Team()))
	if err != nil {
		return fmt.Errorf("team join: %w", err)
	}
	defer c.Wipe()
	fmt.Fprintf(env.Stdout, "Joined team %q as %s (%s), founding lead key %s.\n", c.TeamName, c.Member, c.Kind, team.Fingerprint(c.FoundingLeadKey))
	fmt.Fprintln(env.Stdout, "The app or yett serve shares this machine's rows while its vault is unlocked, and answers the lead's revocation requests.")
	return s.recorded()
}

// teamLeave forgets the membership: it takes authority away (the lead's
// requests no longer reach this machine), so the keyring may open the
// vault.
func teamLeave(ctx context.Context, env *Env) error {
	s, err := openSetup(ctx, env, "team leave", setupUse)
	if err != nil {
		return err
	}
	defer s.close()
	c, err := s.teamCredentials()
	if err != nil {
		return err
	}
	name := c.TeamName
	c.Wipe()
	ok, err := s.tty.Confirm(ctx, fmt.Sprintf("Leave team %q? This machine forgets its credentials for the team's database and shares nothing more.", name))
	if err != nil || !ok {
		return errors.New("team leave: nothing was changed")
	}
	if err := s.v.Team().Remove(name); err != nil {
		return fmt.Errorf("team leave: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Left team %q. Ask its lead to remove this machine (yett team remove), so its role stops logging in.\n", name)
	return s.recorded()
}

// teamCredentials reads this machine's membership from the vault.
func (s *setup) teamCredentials() (*team.Credentials, error) {
	c, err := team.Load(s.v.Team())
	if errors.Is(err, vault.ErrNoTeam) {
		return nil, fmt.Errorf("%s: this machine is in no team (yett team create, or yett team join)", s.name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return c, nil
}
