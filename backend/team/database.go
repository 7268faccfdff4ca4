package team

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/vault"
)

// Errors callers branch on. Their texts never quote a password, a code or
// a URL's user information.
var (
	// ErrInvalid: an argument breaks a rule the error names.
	ErrInvalid = errors.New("team: invalid input")
	// ErrBadCode: the text is not an invitation code (or not a whole one).
	ErrBadCode = errors.New("team: not an invitation code")
	// ErrWrongTeam: the database is not the team the code names, or its
	// founding lead key is not the one the code carries.
	ErrWrongTeam = errors.New("team: the database is not the team the invitation names")
	// ErrInvitationUsed: the invitation was used, expired or withdrawn.
	ErrInvitationUsed = errors.New("team: the invitation was used already, expired or was withdrawn")
	// ErrTeamExists: the database holds a team already.
	ErrTeamExists = errors.New("team: the database already holds a team")
	// ErrNoTeam: the database holds no team (or this role cannot see it).
	ErrNoTeam = errors.New("team: the database holds no team this role can see")
	// ErrUnreachable: the database could not be reached or refused the
	// login. The text says which, never with what.
	ErrUnreachable = errors.New("team: the team database cannot be reached")
	// ErrNotFound: no such machine, member or row.
	ErrNotFound = errors.New("team: no such machine or member")
	// ErrNotLead: the operation needs the lead's role (or the
	// administrative password only a lead's vault holds).
	ErrNotLead = errors.New("team: only a lead may do this")
)

// Database is where a team's PostgreSQL database is: no credential.
type Database struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Name    string `json:"database"`
	SSLMode string `json:"sslmode"`
}

// sslModes a team database may be reached with: the server's certificate
// verified, or no TLS at all to a loopback address (as Yett's credentials
// need HTTPS except to loopback).
var sslModes = map[string]bool{"verify-full": true, "disable": true}

// check says whether d is a database Yett connects to.
func (d Database) check() error {
	if d.Host == "" || len(d.Host) > 253 || strings.ContainsAny(d.Host, " /\\@?#\t\n\x00") {
		return fmt.Errorf("%w: the database host must be a host name or an IP address", ErrInvalid)
	}
	if d.Port < 1 || d.Port > 65535 {
		return fmt.Errorf("%w: the database port must be 1-65535", ErrInvalid)
	}
	if d.Name == "" || len(d.Name) > 63 || strings.ContainsAny(d.Name, "/\\?#\x00\n") {
		return fmt.Errorf("%w: the database name must be 1-63 characters", ErrInvalid)
	}
	if !sslModes[d.SSLMode] {
		return fmt.Errorf("%w: sslmode must be verify-full (or disable, to a loopback address only)", ErrInvalid)
	}
	if d.SSLMode == "disable" && !loopback(d.Host) {
		return fmt.Errorf("%w: a database that is not on this machine's loopback needs sslmode=verify-full: its password and every row would cross the network in the clear", ErrInvalid)
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// String is the database's address as a URL without user information.
func (d Database) String() string {
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(d.Host, strconv.Itoa(d.Port)), Path: "/" + d.Name,
		RawQuery: url.Values{"sslmode": {d.SSLMode}}.Encode()}
	return u.String()
}

// ParseDatabaseURL reads a postgres:// URL that names the database and the
// role, and never a password: the team commands ask for it at the
// terminal, because a password on a command line is readable by every
// program of the user (an agent among them) while the command runs.
// Without sslmode the address is verify-full, or disable for loopback.
func ParseDatabaseURL(s string) (Database, string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Opaque != "" {
		return Database{}, "", fmt.Errorf("%w: give the database as postgres://ROLE@HOST:PORT/DATABASE", ErrInvalid)
	}
	if _, has := u.User.Password(); has {
		return Database{}, "", fmt.Errorf("%w: leave the password out of the URL: Yett asks for it at the terminal, because a command line is readable by every program you run", ErrInvalid)
	}
	d := Database{Host: u.Hostname(), Port: 5432, Name: strings.TrimPrefix(u.Path, "/"), SSLMode: u.Query().Get("sslmode")}
	if p := u.Port(); p != "" {
		if d.Port, err = strconv.Atoi(p); err != nil {
			return Database{}, "", fmt.Errorf("%w: the port must be a number", ErrInvalid)
		}
	}
	for k := range u.Query() {
		if k != "sslmode" {
			return Database{}, "", fmt.Errorf("%w: the URL may carry sslmode only", ErrInvalid)
		}
	}
	if d.SSLMode == "" {
		d.SSLMode = "verify-full"
		if loopback(d.Host) {
			d.SSLMode = "disable"
		}
	}
	role := u.User.Username()
	if role == "" {
		return Database{}, "", fmt.Errorf("%w: the URL names no role (postgres://ROLE@HOST/DATABASE)", ErrInvalid)
	}
	return d, role, d.check()
}

// connectTimeout bounds a login, so an unreachable database is reported,
// not waited for.
const connectTimeout = 10 * time.Second

// connect logs in to d as role. The password is handed to the driver
// only; an error says what failed in words of its own, never the
// driver's text (which can quote the connection string).
func connect(ctx context.Context, d Database, role string, password *vault.Secret) (*pgx.Conn, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "postgres", User: url.User(role), Host: net.JoinHostPort(d.Host, strconv.Itoa(d.Port)), Path: "/" + d.Name,
		RawQuery: url.Values{"sslmode": {d.SSLMode}, "application_name": {"yett"}}.Encode()}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("%w: the address does not parse", ErrInvalid)
	}
	cfg.Password = string(password.Bytes())
	cfg.ConnectTimeout = connectTimeout
	// The simple protocol's caches are per connection and gain nothing
	// for a few statements a minute; describing each statement costs a
	// round trip that a slow link feels.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	c, err := pgx.ConnectConfig(ctx, cfg)
	cfg.Password = ""
	if err != nil {
		return nil, unreachable(err)
	}
	return c, nil
}

// unreachable turns a login failure into words of Yett's: the server's own
// message for a refused login is kept (it names the role at most), a
// network failure becomes "cannot be reached".
func unreachable(err error) error {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		switch pe.SQLState() {
		case "28P01", "28000":
			return fmt.Errorf("%w: the database refused this machine's login (its role was removed, or its password is not the one Yett holds)", ErrUnreachable)
		case "3D000":
			return fmt.Errorf("%w: the database does not exist", ErrUnreachable)
		}
		return fmt.Errorf("%w: the server refused the connection (SQLSTATE %s)", ErrUnreachable, pe.SQLState())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: no answer in time", ErrUnreachable)
	}
	return fmt.Errorf("%w: no connection to the server", ErrUnreachable)
}
