package witness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/tlog"
)

// PGStore keeps a witness's state in PostgreSQL, in tables of its own
// (witness_logs, witness_refusals) under versioned migrations
// (witness_schema_migrations), beside a team's tables in the team
// database. Advance is one conditional statement, so the compare and swap
// holds across witness processes and restarts: PostgreSQL re-checks the
// condition on the row a concurrent writer left (read committed), and a
// loser updates nothing.
type PGStore struct {
	db *pgxpool.Pool
}

// pgMigration is one numbered step of the witness's schema. A released step
// is never edited: databases already ran it.
type pgMigration struct {
	version int
	name    string
	up      []string
}

var pgMigrations = []pgMigration{
	{1, "cosigned trees", []string{
		`CREATE TABLE witness_logs (
			origin text PRIMARY KEY CHECK (octet_length(origin) <= 1024),
			size bigint NOT NULL CHECK (size >= 0),
			root bytea NOT NULL CHECK (length(root) = 32),
			checkpoint text NOT NULL CHECK (octet_length(checkpoint) <= 65536),
			updated_at timestamptz NOT NULL DEFAULT now())`,
		`REVOKE ALL ON witness_logs FROM PUBLIC`,
	}},
	{2, "refusals", []string{
		`CREATE TABLE witness_refusals (
			id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			origin text NOT NULL CHECK (octet_length(origin) <= 1024),
			reason text NOT NULL CHECK (reason IN ('rollback', 'fork')),
			witnessed_size bigint NOT NULL,
			witnessed_root bytea NOT NULL CHECK (length(witnessed_root) = 32),
			size bigint NOT NULL,
			root bytea NOT NULL CHECK (length(root) = 32),
			old_size bigint NOT NULL,
			checkpoint text NOT NULL CHECK (octet_length(checkpoint) <= 65536),
			at timestamptz NOT NULL DEFAULT now())`,
		`CREATE INDEX witness_refusals_by_origin ON witness_refusals (origin, at)`,
		// Anyone who reaches the witness can replay a checkpoint the log
		// once signed: each distinct refusal is kept once, not per request.
		`CREATE UNIQUE INDEX witness_refusals_once ON witness_refusals (origin, reason, witnessed_size, witnessed_root, size, root)`,
		`REVOKE ALL ON witness_refusals FROM PUBLIC`,
	}},
}

// PGSchemaVersion is the version a witness's tables have once migrated.
var PGSchemaVersion = pgMigrations[len(pgMigrations)-1].version

// pgMigrationLock is the advisory lock key the witness's migrations take
// ("yett-wi"); the team's have their own.
const pgMigrationLock int64 = 0x7965_7474_2d77_69

// ErrSchemaTooNew is returned by OpenPGStore for a database a newer Yett
// migrated: this one would not know its tables.
var ErrSchemaTooNew = errors.New("witness: the database's witness tables are newer than this Yett")

// OpenPGStore connects to the database at url (a pgx connection string)
// and brings the witness's tables up to PGSchemaVersion.
func OpenPGStore(ctx context.Context, url string) (*PGStore, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx quotes the connection string, password included.
		return nil, errors.New("witness: malformed database address")
	}
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("witness: database: %w", err)
	}
	if err := migratePG(ctx, db, 0); err != nil {
		db.Close()
		return nil, err
	}
	return &PGStore{db: db}, nil
}

// GrantRead lets each role read the witness's tables (SELECT only): a
// team's lead, whose view shows each machine's last witnessed tree and the
// checkpoints the witness refused. Writing stays the witness's own role's.
// Granting again changes nothing.
func (s *PGStore) GrantRead(ctx context.Context, roles ...string) error {
	for _, r := range roles {
		if _, err := s.db.Exec(ctx, `GRANT SELECT ON witness_logs, witness_refusals TO `+pgx.Identifier{r}.Sanitize()); err != nil {
			return fmt.Errorf("witness: letting %q read: %w", r, err)
		}
	}
	return nil
}

// Close closes the store's connections.
func (s *PGStore) Close() { s.db.Close() }

// migratePG runs the migrations the database has not run yet, up to upto
// (0: all; tests leave a database at an older version). Two witnesses
// migrating at once take turns on an advisory lock; each step runs in a
// transaction that also records it, so a crash leaves the database at the
// previous version or this one.
func migratePG(ctx context.Context, db *pgxpool.Pool, upto int) error {
	c, err := db.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("witness: database: %w", err)
	}
	defer c.Release()
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1)`, pgMigrationLock); err != nil {
		return fmt.Errorf("witness: migrations: %w", err)
	}
	defer c.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, pgMigrationLock)
	if _, err := c.Exec(ctx, `CREATE TABLE IF NOT EXISTS witness_schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now());
		REVOKE ALL ON witness_schema_migrations FROM PUBLIC`); err != nil {
		return fmt.Errorf("witness: migrations: %w", err)
	}
	var have int
	if err := c.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM witness_schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("witness: migrations: %w", err)
	}
	if have > PGSchemaVersion {
		return fmt.Errorf("%w (version %d, this Yett knows %d)", ErrSchemaTooNew, have, PGSchemaVersion)
	}
	for _, m := range pgMigrations {
		if m.version <= have || (upto != 0 && m.version > upto) {
			continue
		}
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			for _, stmt := range m.up {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO witness_schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("witness: migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

func (s *PGStore) Latest(ctx context.Context, origin string) (State, error) {
	var st State
	var root []byte
	var cp string
	err := s.db.QueryRow(ctx, `SELECT size, root, checkpoint FROM witness_logs WHERE origin = $1`, origin).Scan(&st.Tree.N, &root, &cp)
	if errors.Is(err, pgx.ErrNoRows) {
		return State{}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("witness: database: %w", err)
	}
	copy(st.Tree.Hash[:], root)
	st.Checkpoint = []byte(cp)
	return st, nil
}

func (s *PGStore) Advance(ctx context.Context, origin string, old tlog.Tree, next State) error {
	var tag pgconn.CommandTag
	var err error
	if old == (tlog.Tree{}) {
		tag, err = s.db.Exec(ctx, `INSERT INTO witness_logs (origin, size, root, checkpoint) VALUES ($1, $2, $3, $4)
			ON CONFLICT (origin) DO NOTHING`, origin, next.Tree.N, next.Tree.Hash[:], string(next.Checkpoint))
	} else {
		tag, err = s.db.Exec(ctx, `UPDATE witness_logs SET size = $2, root = $3, checkpoint = $4, updated_at = now()
			WHERE origin = $1 AND size = $5 AND root = $6`,
			origin, next.Tree.N, next.Tree.Hash[:], string(next.Checkpoint), old.N, old.Hash[:])
	}
	if err != nil {
		return fmt.Errorf("witness: database: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	cur, err := s.Latest(ctx, origin)
	if err != nil {
		return err
	}
	return &ConflictError{Size: cur.Tree.N}
}

func (s *PGStore) Refuse(ctx context.Context, r Refusal) error {
	_, err := s.db.Exec(ctx, `INSERT INTO witness_refusals
		(origin, reason, witnessed_size, witnessed_root, size, root, old_size, checkpoint, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
		r.Origin, string(r.Reason), r.Witnessed.N, r.Witnessed.Hash[:], r.Tree.N, r.Tree.Hash[:], r.OldSize, string(r.Checkpoint), r.At)
	if err != nil {
		return fmt.Errorf("witness: database: %w", err)
	}
	return nil
}

// WitnessedLog is one log as the witness holds it, for a lead's view.
type WitnessedLog struct {
	Origin    string
	State     State
	UpdatedAt time.Time // when the witness last cosigned (the database's clock)
}

// Logs returns every log the witness cosigned, by origin.
func (s *PGStore) Logs(ctx context.Context) ([]WitnessedLog, error) {
	rows, err := s.db.Query(ctx, `SELECT origin, size, root, checkpoint, updated_at FROM witness_logs ORDER BY origin`)
	if err != nil {
		return nil, fmt.Errorf("witness: database: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (WitnessedLog, error) {
		var l WitnessedLog
		var root []byte
		var cp string
		err := row.Scan(&l.Origin, &l.State.Tree.N, &root, &cp, &l.UpdatedAt)
		copy(l.State.Tree.Hash[:], root)
		l.State.Checkpoint = []byte(cp)
		return l, err
	})
}

// Refusals returns the refusals kept for origin, oldest first.
func (s *PGStore) Refusals(ctx context.Context, origin string) ([]Refusal, error) {
	rows, err := s.db.Query(ctx, `SELECT reason, witnessed_size, witnessed_root, size, root, old_size, checkpoint, at
		FROM witness_refusals WHERE origin = $1 ORDER BY at, id`, origin)
	if err != nil {
		return nil, fmt.Errorf("witness: database: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Refusal, error) {
		r := Refusal{Origin: origin}
		var wroot, root []byte
		var reason, cp string
		err := row.Scan(&reason, &r.Witnessed.N, &wroot, &r.Tree.N, &root, &r.OldSize, &cp, &r.At)
		r.Reason, r.Checkpoint = RefusalReason(reason), []byte(cp)
		copy(r.Witnessed.Hash[:], wroot)
		copy(r.Tree.Hash[:], root)
		return r, err
	})
}
