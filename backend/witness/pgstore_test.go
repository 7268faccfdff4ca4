//go:build unix

package witness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

// witnessDB makes a role that owns nothing but a database of its own (no
// superuser, no BYPASSRLS: the witness's account) and returns its URL.
func witnessDB(t testing.TB, srv *pgtest.Server, name string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, srv.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, stmt := range []string{
		fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD 'pw-%s'`, name, name),
		fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, name, name),
	} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return srv.URL(name, "pw-"+name, name)
}

func openPG(t testing.TB, url string) *PGStore {
	t.Helper()
	s, err := OpenPGStore(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestPGStore(t *testing.T) {
	srv := pgtest.Start(t)
	t.Run("contract", func(t *testing.T) {
		s := openPG(t, witnessDB(t, srv, "contract"))
		testStoreContract(t, s)
		r, err := s.Refusals(context.Background(), "example.com/contract")
		if err != nil || len(r) != 1 || r[0].Reason != RefusedRollback || r[0].Tree.N != 3 || string(r[0].Checkpoint) != "cp3\n" {
			t.Fatalf("refusals %+v: %v", r, err)
		}
		logs, err := s.Logs(context.Background())
		if err != nil || len(logs) != 1 || logs[0].State.Tree.N != 5 || logs[0].UpdatedAt.IsZero() {
			t.Fatalf("logs %+v: %v", logs, err)
		}
	})
	// Exactly one of eight requests that all read the same state wins, round
	// after round: the UPDATE's condition is the compare and swap.
	t.Run("concurrent add-checkpoint", func(t *testing.T) {
		testConcurrentAddCheckpoint(t, openPG(t, witnessDB(t, srv, "concurrent")))
	})
	// Two witness processes on one database (two stores, two pools): the
	// swap holds between them too.
	t.Run("two witnesses", func(t *testing.T) {
		url := witnessDB(t, srv, "twowitnesses")
		a, b := openPG(t, url), openPG(t, url)
		testConcurrentAddCheckpoint(t, &alternating{stores: []Store{a, b}})
	})
}

// A role granted read (a team's lead) reads the witness's tables and
// cannot write them; another role reads nothing.
func TestPGStoreGrantRead(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	s := openPG(t, witnessDB(t, srv, "grants"))
	if err := s.Advance(ctx, "example.com/log", tlog.Tree{}, State{Tree: tlog.Tree{N: 3, Hash: tlog.Hash{3}}, Checkpoint: []byte("cp3\n")}); err != nil {
		t.Fatal(err)
	}
	su, err := pgx.Connect(ctx, srv.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	for _, r := range []string{"lead", "member"} {
		if _, err := su.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD 'pw-%s'`, r, r)); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := s.GrantRead(ctx, "lead"); err != nil {
			t.Fatal(err)
		}
	}
	as := func(role string) *pgx.Conn {
		c, err := pgx.Connect(ctx, srv.URL(role, "pw-"+role, "grants"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	lead, member := as("lead"), as("member")
	var size int64
	if err := lead.QueryRow(ctx, `SELECT size FROM witness_logs WHERE origin = 'example.com/log'`).Scan(&size); err != nil || size != 3 {
		t.Fatalf("the lead reads %d, %v", size, err)
	}
	if _, err := lead.Exec(ctx, `SELECT count(*) FROM witness_refusals`); err != nil {
		t.Fatalf("the lead reads no refusals: %v", err)
	}
	for name, stmt := range map[string]string{
		"update": `UPDATE witness_logs SET size = 0`,
		"delete": `DELETE FROM witness_refusals`,
		"insert": `INSERT INTO witness_refusals (origin, reason, witnessed_size, witnessed_root, size, root, old_size, checkpoint)
			VALUES ('o', 'fork', 0, decode(repeat('00', 32), 'hex'), 0, decode(repeat('00', 32), 'hex'), 0, '')`,
	} {
		if _, err := lead.Exec(ctx, stmt); !denied(err) {
			t.Errorf("the lead's %s: %v, want permission denied", name, err)
		}
	}
	if _, err := member.Exec(ctx, `SELECT size FROM witness_logs`); !denied(err) {
		t.Errorf("a role never granted reads the witness's state: %v", err)
	}
	if err := s.GrantRead(ctx, `lead"; DROP TABLE witness_logs; --`); err == nil {
		t.Error("granted to a role that does not exist")
	}
	if _, err := s.Latest(ctx, "example.com/log"); err != nil {
		t.Fatalf("the table is gone: %v", err)
	}
}

// denied: PostgreSQL's insufficient_privilege.
func denied(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}

// alternating hands each call to the next of its stores in turn.
type alternating struct {
	mu     sync.Mutex
	stores []Store
	next   int
}

func (a *alternating) pick() Store {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	return a.stores[a.next%len(a.stores)]
}

func (a *alternating) Latest(ctx context.Context, origin string) (State, error) {
	return a.pick().Latest(ctx, origin)
}

func (a *alternating) Advance(ctx context.Context, origin string, old tlog.Tree, next State) error {
	return a.pick().Advance(ctx, origin, old, next)
}

func (a *alternating) Refuse(ctx context.Context, r Refusal) error { return a.pick().Refuse(ctx, r) }

// Migrations run on an empty database, on one at the previous version
// (keeping its rows), on one already current (doing nothing), from several
// witnesses at once, and refuse a database a newer Yett migrated.
func TestPGMigrations(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	version := func(t *testing.T, url string) int {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var v int
		if err := c.QueryRow(ctx, `SELECT max(version) FROM witness_schema_migrations`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	t.Run("empty, several at once", func(t *testing.T) {
		url := witnessDB(t, srv, "empty")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				s, err := OpenPGStore(ctx, url)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if v := version(t, url); v != PGSchemaVersion {
			t.Fatalf("version %d, want %d", v, PGSchemaVersion)
		}
	})
	t.Run("previous version", func(t *testing.T) {
		url := witnessDB(t, srv, "previous")
		db, err := pgxpool.New(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := migratePG(ctx, db, PGSchemaVersion-1); err != nil {
			t.Fatal(err)
		}
		if v := version(t, url); v != PGSchemaVersion-1 {
			t.Fatalf("left at %d", v)
		}
		old := &PGStore{db: db}
		t7 := tlog.Tree{N: 7, Hash: tlog.Hash{7}}
		if err := old.Advance(ctx, "example.com/log", tlog.Tree{}, State{Tree: t7, Checkpoint: []byte("cp7\n")}); err != nil {
			t.Fatal(err)
		}
		s := openPG(t, url)
		if v := version(t, url); v != PGSchemaVersion {
			t.Fatalf("version %d, want %d", v, PGSchemaVersion)
		}
		if st, err := s.Latest(ctx, "example.com/log"); err != nil || st.Tree != t7 {
			t.Fatalf("after the migration: %+v, %v", st.Tree, err)
		}
		testStoreContract(t, s)
		// Once more: nothing to do.
		openPG(t, url)
		if v := version(t, url); v != PGSchemaVersion {
			t.Fatalf("version %d after a second open", v)
		}
	})
	t.Run("newer", func(t *testing.T) {
		url := witnessDB(t, srv, "newer")
		openPG(t, url)
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `INSERT INTO witness_schema_migrations (version, name) VALUES ($1, 'from the future')`, PGSchemaVersion+1); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenPGStore(ctx, url); !errors.Is(err, ErrSchemaTooNew) {
			t.Fatalf("a newer schema: %v", err)
		}
	})
}

// A witness restarted (its process, or PostgreSQL under it) loses nothing
// it cosigned: the next request must prove from the size it had, a request
// while the database is down is answered with an error and changes
// nothing, and a stale proof is still a conflict.
func TestWitnessRestartKeepsState(t *testing.T) {
	srv := pgtest.Start(t)
	url := witnessDB(t, srv, "restart")
	ctx := context.Background()
	l := newTestLog(t, "example.com/log").grow(60)
	key, err := NewKey("witness.test/w1")
	if err != nil {
		t.Fatal(err)
	}
	first := startWitnessWithKey(t, key, openPG(t, url), l)
	for _, step := range [][2]int64{{0, 10}, {10, 20}} {
		if _, err := first.client.Cosign(ctx, l.checkpoint(step[1]), l.proof(step[0], step[1])); err != nil {
			t.Fatal(err)
		}
	}
	first.srv.Close()
	first.store.(*PGStore).Close()

	second := startWitnessWithKey(t, key, openPG(t, url), l)
	var conflict *ConflictError
	if _, err := second.client.Cosign(ctx, l.checkpoint(30), l.proof(10, 30)); !errors.As(err, &conflict) || conflict.Size != 20 {
		t.Fatalf("after the witness's restart, a proof from 10: %v", err)
	}
	if _, err := second.client.Cosign(ctx, l.checkpoint(30), l.proof(20, 30)); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	if _, err := second.client.Cosign(ctx, l.checkpoint(40), l.proof(30, 40)); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("with the database down: %v", err)
	}
	srv.Restart(t)
	if _, err := second.client.Cosign(ctx, l.checkpoint(40), l.proof(20, 40)); !errors.As(err, &conflict) || conflict.Size != 30 {
		t.Fatalf("after the database's restart, a proof from 20: %v", err)
	}
	if _, err := second.client.Cosign(ctx, l.checkpoint(40), l.proof(30, 40)); err != nil {
		t.Fatal(err)
	}
	if st, _ := second.store.Latest(ctx, l.origin); st.Tree != l.tree(40) {
		t.Fatalf("stored %+v", st.Tree)
	}
}
