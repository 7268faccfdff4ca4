//go:build unix

package team_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/witness"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// A running Yett submits its checkpoints to the team's witness by itself
// (backend/keeper's witnessing): these tests run a real witness on
// loopback in front of a machine whose keeper is the one the app and yett
// serve use, in a team on a real PostgreSQL.

// teamWitness is a real witness (backend/witness) over HTTP on loopback;
// down makes it answer 503 as a tunnel whose witness is gone does.
type teamWitness struct {
	key      *witness.Key
	store    *witness.MemStore
	url      string
	down     atomic.Bool
	refused  atomic.Int64 // requests answered 503 while down
	requests atomic.Int64
}

func newTeamWitness(t *testing.T, logKeys ...string) *teamWitness {
	t.Helper()
	key, err := witness.NewKey("witness.test/team")
	if err != nil {
		t.Fatal(err)
	}
	logs, err := witness.NewKnownLogs(logKeys...)
	if err != nil {
		t.Fatal(err)
	}
	w := &teamWitness{key: key, store: witness.NewMemStore()}
	srv := witness.New(key, logs, w.store, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.requests.Add(1)
		if w.down.Load() {
			w.refused.Add(1)
			http.Error(rw, "the witness is down", http.StatusServiceUnavailable)
			return
		}
		srv.ServeHTTP(rw, r)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	w.url = "http://" + ln.Addr().String()
	return w
}

// size is the size the witness cosigned last for m's log, -1 for none.
func (w *teamWitness) size(t *testing.T, m *machine) int64 {
	t.Helper()
	st, err := w.store.Latest(context.Background(), logOrigin(t, m))
	if err != nil {
		t.Fatal(err)
	}
	if st.Checkpoint == nil {
		return -1
	}
	return st.Tree.N
}

// settings name w for a machine, as yett team witness does.
func (w *teamWitness) settings() *team.WitnessSettings {
	return &team.WitnessSettings{URL: w.url, Key: w.key.VerifierKey()}
}

func auditDir(m *machine) string { return filepath.Join(m.dir, "audit") }

// newestCheckpoint is the checkpoint m's log signed last, from its file.
func newestCheckpoint(t *testing.T, m *machine) audit.Checkpoint {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(auditDir(m), audit.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := audit.ParseCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func logOrigin(t *testing.T, m *machine) string {
	origin, _, _ := strings.Cut(string(newestCheckpoint(t, m).Text), "\n")
	return origin
}

// checkpoint records n entries in m's log and signs a checkpoint.
func checkpoint(t *testing.T, m *machine, n int) audit.Checkpoint {
	t.Helper()
	l := m.k.AuditLog()
	for range n {
		if _, err := l.Append(context.Background(), audit.Event{Type: audit.EventGatewayStarted, Time: time.Now().UTC(), BootID: "witnessed-test"}); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := l.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// leadCosigned is the newest cosigned size of m's log the lead sees.
func leadCosigned(t *testing.T, lead *team.Lead, m *machine) int64 {
	t.Helper()
	cps, err := lead.Checkpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cps {
		if c.Hostname == m.host {
			return c.CosignedSize
		}
	}
	return 0
}

// restartKeeper closes m's keeper (which locks the vault), calls between
// with the data directory at rest, and opens a keeper with a short witness
// retry and its log in logs, then unlocks.
func (m *machine) restartKeeper(logs *syncbuf.Buffer, between func()) {
	m.t.Helper()
	m.k.Close()
	if between != nil {
		between()
	}
	k, err := keeper.Open(keeper.Config{DataDir: m.dir, RuntimeDir: m.run, Vault: m.v, ApprovalTimeout: time.Minute,
		WitnessRetry: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		m.t.Fatal(err)
	}
	m.k = k
	m.unlock()
	waitFor(m.t, m.host+"'s syncer", func() bool { return m.k.Team() != nil })
}

// witnessedPair is a founding lead and a member whose membership names a
// witness that trusts the member's log.
func witnessedPair(t *testing.T) (lea, mia *machine, w *teamWitness, lead *team.Lead, logs *syncbuf.Buffer) {
	t.Helper()
	db, admin := teamDatabase(t, pgtest.Shared(t))
	lea, mia = newMachine(t, "lea-laptop"), newMachine(t, "mia-desktop")
	createTeam(t, lea, db, admin)
	invite(t, lea, mia, "mia")
	w = newTeamWitness(t, mia.k.AuditLog().VerifierKey())
	logs = &syncbuf.Buffer{}
	mia.restartKeeper(logs, nil)
	if err := team.SetWitness(mia.v.Team(), w.settings()); err != nil {
		t.Fatal(err)
	}
	var err error
	if lead, err = team.OpenLead(context.Background(), lea.creds()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lead.Close() })
	return lea, mia, w, lead, logs
}

// TestRunningYettSubmitsCheckpoints: once the membership names the
// witness, each checkpoint the machine's log signs is cosigned and reaches
// the lead, and the one its lock signs is cosigned before the lock is done.
func TestRunningYettSubmitsCheckpoints(t *testing.T) {
	_, mia, w, lead, _ := witnessedPair(t)
	cp := checkpoint(t, mia, 3)
	waitFor(t, "the witness to cosign the checkpoint", func() bool { return w.size(t, mia) >= cp.Size })
	waitFor(t, "the cosignature at the lead", func() bool { return leadCosigned(t, lead, mia) >= cp.Size })

	mia.lock()
	waitFor(t, "mia's syncer to stop", func() bool { return mia.k.Team() == nil })
	locked := newestCheckpoint(t, mia)
	if locked.Size <= cp.Size {
		t.Fatalf("the lock signed no new checkpoint: %d after %d", locked.Size, cp.Size)
	}
	if got := w.size(t, mia); got != locked.Size {
		t.Fatalf("the witness holds size %d after the lock, the lock's checkpoint is %d", got, locked.Size)
	}
	held, err := witness.ParseCosigned(cosignedFile(t, mia, w))
	if err != nil || held.Size != locked.Size {
		t.Fatalf("the cosigned checkpoint kept on the machine: size %d, %v; want %d", held.Size, err, locked.Size)
	}
	mia.unlock()
	waitFor(t, "the lock's cosignature at the lead", func() bool { return leadCosigned(t, lead, mia) >= locked.Size })
}

func cosignedFile(t *testing.T, m *machine, w *teamWitness) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(witness.StateDirFor(auditDir(m), w.key.VerifierKey()), witness.CosignedFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWitnessDownThenUp: while the witness does not answer, checkpoints
// wait and the machine tries again (backing off), saying so once in its
// log; when it answers again the newest checkpoint, which covers the ones
// before it, is cosigned and reaches the lead with no new checkpoint
// needed.
func TestWitnessDownThenUp(t *testing.T) {
	_, mia, w, lead, logs := witnessedPair(t)
	first := checkpoint(t, mia, 1)
	waitFor(t, "the first cosignature", func() bool { return w.size(t, mia) >= first.Size })

	w.down.Store(true)
	var last audit.Checkpoint
	for i := range 3 {
		last = checkpoint(t, mia, i+1)
	}
	waitFor(t, "three attempts while the witness is down", func() bool { return w.refused.Load() >= 4 })
	if got := w.size(t, mia); got >= last.Size {
		t.Fatalf("the witness holds size %d while down", got)
	}
	w.down.Store(false)
	waitFor(t, "the backlog cosigned on reconnect", func() bool { return w.size(t, mia) == last.Size })
	waitFor(t, "the backlog at the lead", func() bool { return leadCosigned(t, lead, mia) == last.Size })
	waitFor(t, "the log to say the witness is back", func() bool { return strings.Contains(logs.String(), "cosigns this machine's audit checkpoints again") })
	out := logs.String()
	if n := strings.Count(out, "cannot be reached"); n != 1 {
		t.Fatalf("%d log lines about the unreachable witness after %d attempts, want 1:\n%s", n, w.refused.Load(), out)
	}
}

// TestRestoredLogIsRefusedAndRecorded: the machine's data directory put
// back to an older copy (entries the witness cosigned are gone) gets no
// cosignature again, the refusal is recorded once in the machine's log as
// checkpoint_refused, the witness keeps it, and the lead's view says so,
// signed by the machine.
func TestRestoredLogIsRefusedAndRecorded(t *testing.T) {
	_, mia, w, lead, logs := witnessedPair(t)
	first := checkpoint(t, mia, 1)
	waitFor(t, "the first cosignature", func() bool { return w.size(t, mia) >= first.Size })

	backup := filepath.Join(t.TempDir(), "data")
	mia.restartKeeper(logs, func() { copyDir(t, mia.dir, backup) })
	big := checkpoint(t, mia, 40)
	waitFor(t, "the larger tree cosigned", func() bool { return w.size(t, mia) == big.Size })
	waitFor(t, "the larger tree at the lead", func() bool { return leadCosigned(t, lead, mia) == big.Size })

	var top int64 // what the witness cosigned last: the lock's checkpoint
	mia.restartKeeper(logs, func() {
		top = w.size(t, mia)
		// The whole directory, vault and journal too: the journal carries
		// the log's newest records, so a log put back alone does not open.
		mia.v.Close()
		if err := os.RemoveAll(mia.dir); err != nil {
			t.Fatal(err)
		}
		copyDir(t, backup, mia.dir)
		var err error
		if mia.v, err = vault.Open(mia.dir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}}); err != nil {
			t.Fatal(err)
		}
	})
	cut := checkpoint(t, mia, 1)
	if cut.Size >= big.Size || top < big.Size {
		t.Fatalf("the restored log is not smaller: %d, the witness at %d", cut.Size, top)
	}
	waitFor(t, "the refusal kept by the witness", func() bool { return len(w.store.Refusals()) >= 1 })
	checkpoint(t, mia, 1) // refused again: recorded once
	waitFor(t, "the checkpoint_refused entry", func() bool { return len(refusals(t, mia)) >= 1 })
	if got := w.size(t, mia); got != top {
		t.Fatalf("the witness moved from %d to %d for a restored log", top, got)
	}
	mia.lock() // the lock's checkpoint is refused too; the log is read while locked below
	waitFor(t, "mia's syncer to stop", func() bool { return mia.k.Team() == nil })
	mia.unlock()
	rs := refusals(t, mia)
	if len(rs) != 1 || rs[0].Reason != "rollback" || rs[0].WitnessSize != top || rs[0].Witness != "witness.test/team" {
		t.Fatalf("the refusals recorded: %+v, want one rollback from %d", rs, top)
	}
	if r := w.store.Refusals()[0]; r.Reason != witness.RefusedRollback || r.Witnessed.N != top {
		t.Fatalf("the witness's refusal: %+v", r)
	}
	if got := leadCosigned(t, lead, mia); got < big.Size || got > top {
		t.Fatalf("the lead sees %d cosigned, the witness %d", got, top)
	}
	var seen team.CheckpointView
	waitFor(t, "the refusal at the lead", func() bool {
		cps, err := lead.Checkpoints(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cps {
			if c.Hostname == mia.host {
				seen = c
			}
		}
		return seen.Refused != ""
	})
	if seen.Refused != "rollback" || seen.RefusedWitnessSize != top || seen.RefusedSize != rs[0].Size || seen.RefusedBy != "witness.test/team" ||
		!seen.RefusalVerified || seen.RefusedAt.IsZero() {
		t.Fatalf("the lead's view of mia's checkpoints: %+v", seen)
	}
}

// refusals reads m's log for checkpoint_refused entries.
func refusals(t *testing.T, m *machine) []audit.WitnessFacts {
	t.Helper()
	id, err := m.v.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.WitnessFacts
	for e, err := range audit.ReadEvents(filepath.Join(auditDir(m), audit.LogFile), id) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type == audit.EventCheckpointRefused {
			out = append(out, *e.Event.Witness)
		}
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := os.CopyFS(to, os.DirFS(from))
	if err != nil {
		t.Fatal(fmt.Errorf("copying %s: %w", from, err))
	}
}

// TestLeavingStopsSubmitting: a membership that no longer names the
// witness, and a machine that left the team, submit nothing more: not the
// lock's checkpoint (submitted while the lock is handled, were the
// submitter still running), not a later one.
func TestLeavingStopsSubmitting(t *testing.T) {
	_, mia, w, _, _ := witnessedPair(t)
	first := checkpoint(t, mia, 1)
	waitFor(t, "the first cosignature", func() bool { return w.size(t, mia) >= first.Size })
	if err := team.SetWitness(mia.v.Team(), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the syncer restarted", func() bool { return mia.k.Team() != nil })
	before := w.requests.Load()
	mia.lock()
	waitFor(t, "mia's syncer to stop", func() bool { return mia.k.Team() == nil })
	mia.unlock()
	waitFor(t, "mia's syncer", func() bool { return mia.k.Team() != nil })
	if got := w.requests.Load(); got != before {
		t.Fatalf("%d requests to the witness after the membership stopped naming it", got-before)
	}

	if err := team.SetWitness(mia.v.Team(), w.settings()); err != nil {
		t.Fatal(err)
	}
	again := checkpoint(t, mia, 1)
	waitFor(t, "a cosignature with the witness named again", func() bool { return w.size(t, mia) == again.Size })
	if err := mia.v.Team().Remove("platform"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "mia's syncer to stop at leave", func() bool { return mia.k.Team() == nil })
	before = w.requests.Load()
	checkpoint(t, mia, 1)
	mia.lock()
	mia.unlock()
	if got := w.requests.Load(); got != before {
		t.Fatalf("%d requests to the witness after the machine left the team", got-before)
	}
}

// Settings that name no usable witness are refused before they reach the
// vault.
func TestWitnessSettingsCheck(t *testing.T) {
	key, err := witness.NewKey("witness.test/team")
	if err != nil {
		t.Fatal(err)
	}
	good := team.WitnessSettings{URL: "http://127.0.0.1:7380", Key: key.VerifierKey()}
	if err := good.Check(); err != nil {
		t.Fatalf("%+v: %v", good, err)
	}
	for _, bad := range []team.WitnessSettings{
		{URL: "ftp://127.0.0.1:7380", Key: good.Key},
		{URL: "http://", Key: good.Key},
		{URL: "http://user:CANARY-pw@127.0.0.1:7380", Key: good.Key},
		{URL: "127.0.0.1:7380", Key: good.Key},
		{URL: good.URL, Key: ""},
		{URL: good.URL, Key: "witness.test/team+00000000+AAAA"},
	} {
		err := bad.Check()
		if err == nil {
			t.Errorf("%+v accepted", bad)
		} else if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("the error quotes the address: %v", err)
		}
	}
}

// TestResetStopsSharing: a vault reset while unlocked (no lock announced)
// stops the syncer and the submitter with it: the old vault's membership
// and the log set aside share nothing more.
func TestResetStopsSharing(t *testing.T) {
	_, mia, w, _, _ := witnessedPair(t)
	first := checkpoint(t, mia, 1)
	waitFor(t, "the first cosignature", func() bool { return w.size(t, mia) >= first.Size })
	if err := mia.v.Reset(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "mia's syncer to stop at the reset", func() bool { return mia.k.Team() == nil })
}
