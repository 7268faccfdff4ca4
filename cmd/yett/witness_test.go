//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/witness"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

const witnessDBCanary = "CANARY-witness-db-9e13f2"

// TestWitnessCommands is a team witness set up and run at a terminal: yett
// witness init seals a new key and the database's address (typed with echo
// off) in the vault, key prints the verifier key, serve cosigns a member
// machine's checkpoints until interrupted and, started again, goes on
// from what PostgreSQL kept; the cosigned checkpoint passes yett audit
// verify --witness-key. The database password is in no command line, no
// environment and no output.
func TestWitnessCommands(t *testing.T) {
	home := newHome(t)
	env := homeEnv(home)
	pg := pgtest.Start(t)
	dbURL := witnessDatabase(t, pg)
	stop := watchProcesses(t, witnessDBCanary)
	runSetup(t, env, nil, "init")
	out := runSetup(t, env, func(r *ptyRun) { r.answer(t, "The witness's PostgreSQL address (not shown as you type): ", dbURL) },
		"witness", "init", "--name", "witness.test/team")
	vkey := regexp.MustCompile(`witness\.test/team\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+`).FindString(out)
	if vkey == "" {
		t.Fatalf("witness init printed no verifier key:\n%s", out)
	}
	if out := runSetup(t, env, nil, "witness", "key"); !strings.Contains(out, vkey) {
		t.Fatalf("witness key:\n%s", out)
	}

	member := newMemberLog(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	serve := func() *ptyRun {
		r := startPTY(t, env, yettBin, "witness", "serve", "--listen", addr, "--log-key", member.VerifierKey(), "--reader", "lead")
		r.answer(t, "Yett vault passphrase: ", setupPassphrase)
		r.expect(t, "listening on http://"+addr+" for 1 logs")
		return r
	}
	interrupt := func(r *ptyRun) {
		r.cmd.Process.Signal(syscall.SIGINT)
		r.expect(t, "yett witness: stopped")
		if code := r.wait(t); code != 0 {
			t.Fatalf("witness serve exited %d:\n%s", code, r.screen.String())
		}
	}
	v, err := witness.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	s := &witness.Submitter{Dir: member.dir, Client: &witness.Client{URL: "http://" + addr, Witness: v}}
	first := serve()
	member.record(t, 5)
	if _, err := s.Submit(context.Background()); err != nil {
		t.Fatalf("cosign: %v\n%s", err, first.screen.String())
	}
	interrupt(first)

	second := serve()
	member.record(t, 9)
	cosigned, err := s.Submit(context.Background())
	if err != nil {
		t.Fatalf("cosign after the restart: %v\n%s", err, second.screen.String())
	}
	interrupt(second)
	// The lead (--reader) sees the machine's last witnessed tree.
	lead, err := pgx.Connect(context.Background(), pg.URL("lead", "lead-pw", "team"))
	if err != nil {
		t.Fatal(err)
	}
	defer lead.Close(context.Background())
	var size int64
	if err := lead.QueryRow(context.Background(), `SELECT size FROM witness_logs`).Scan(&size); err != nil || size != member.Head().Size {
		t.Fatalf("the lead reads size %d (%v), the member's log holds %d", size, err, member.Head().Size)
	}
	held := filepath.Join(t.TempDir(), "cosigned")
	if err := os.WriteFile(held, cosigned, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv},
		[]string{"audit", "verify", "--log", filepath.Join(member.dir, audit.LogFile), "--checkpoint", held, "--witness-key", vkey})
	if code != 0 || !strings.Contains(stdout.String(), "cosigned by witness.test/team at ") {
		t.Fatalf("audit verify exited %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	stop()
	for _, screen := range []string{first.screen.String(), second.screen.String()} {
		if strings.Contains(screen, witnessDBCanary) {
			t.Fatal("the database password was shown")
		}
	}
}

// witnessDatabase makes the witness's role and database; the role's
// password is the canary.
func witnessDatabase(t *testing.T, pg *pgtest.Server) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pg.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, stmt := range []string{`CREATE ROLE witness LOGIN PASSWORD '` + witnessDBCanary + `'`, `CREATE DATABASE team OWNER witness`,
		`CREATE ROLE lead LOGIN PASSWORD 'lead-pw'`} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return pg.URL("witness", witnessDBCanary, "team")
}

// memberLog is another machine's audit log.
type memberLog struct {
	*audit.Log
	dir string
}

func newMemberLog(t *testing.T) *memberLog {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "audit")
	l, _, err := audit.Open(audit.Options{Dir: dir, Recipient: id.Recipient(), CheckpointAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &memberLog{Log: l, dir: dir}
}

// record appends n events and signs a checkpoint.
func (m *memberLog) record(t *testing.T, n int) {
	t.Helper()
	for range n {
		if _, err := m.Append(context.Background(), audit.Event{Type: audit.EventGatewayStarted, Time: time.Now().UTC(), BootID: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
}

// What serve refuses before it opens anything: no logs, a wide address.
func TestWitnessServeRefuses(t *testing.T) {
	m := newMemberLog(t)
	for _, args := range [][]string{
		{"witness", "serve"},
		{"witness", "serve", "--log-key", m.VerifierKey(), "--listen", "0.0.0.0:7380"},
		{"witness", "serve", "--log-key", "not-a-key"},
		{"witness", "init"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}, args)
		if code != 2 {
			t.Errorf("%v: exit %d: %s", args, code, stderr.String())
		}
	}
}
