package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/store"
	"github.com/yettdev/yett/backend/vault"
)

type auditFixture struct {
	dir    string
	vault  *vault.Vault
	keeper *keeper.Keeper
	svc    *AuditService
	rec    *recorder
	logs   *bytes.Buffer
}

// newAuditFixture opens a real vault and the audit service over a real log
// in a temp dir (dir reused when given, to test a restart).
func newAuditFixture(t *testing.T, dir string) *auditFixture {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	v, err := vault.Open(dir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	f := &auditFixture{dir: dir, vault: v, rec: &recorder{}, logs: &bytes.Buffer{}}
	logger := slog.New(slog.NewTextHandler(f.logs, nil))
	// The keeper writes the log, as it does in the app.
	if f.keeper, err = keeper.Open(keeper.Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	sink := &eventSink{}
	sink.attach(f.rec.emit)
	f.svc = newAuditService(v, f.keeper, sink, logger, 5*time.Millisecond)
	t.Cleanup(f.close)
	return f
}

func (f *auditFixture) close() {
	f.vault.Lock("test_end")
	f.svc.close()
	f.keeper.Close()
	f.vault.Close()
}

// settledStatus is the status once every verification it started is done
// and its result is for the files as they are.
func settledStatus(t *testing.T, s *AuditService) AuditStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Status()
		s.verified.wait()
		if w := s.keeper.AuditLog(); w != nil {
			<-w.Verified()
		}
		// A log that stopped itself is final: the writer's verdict.
		final := st.State == "tampered" || s.verified.settled(s.dir)
		if again := s.Status(); st.State != "verifying" && again.State == st.State && again.Entries == st.Entries && final {
			return again
		}
		if time.Now().After(deadline) {
			t.Fatalf("the status did not settle: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func activityTypes(t *testing.T, s *AuditService) []string {
	t.Helper()
	view, err := s.Activity(ActivityFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !view.Readable {
		t.Fatalf("activity not readable: %q", view.Note)
	}
	var out []string
	for _, it := range view.Items {
		out = append(out, it.Type+":"+it.Reason)
	}
	return out
}

func TestAuditServiceRecordsVaultLockAndUnlock(t *testing.T) {
	f := newAuditFixture(t, "")
	if st := f.svc.Status(); st.State != "absent" || st.Writing {
		t.Fatalf("before setup: %+v", st)
	}
	if v := f.svc.Sessions(PageRequest{}); v.Readable || v.Note == "" {
		t.Fatalf("sessions before setup: %+v", v)
	}
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	if st := settledStatus(t, f.svc); st.State != "intact" || !st.Writing || st.Entries == 0 {
		t.Fatalf("after create: %+v", st)
	}
	if f.keeper.AuditLog() == nil {
		t.Fatal("no writer to hand to the gateway")
	}
	if err := f.vault.Lock("user"); err != nil {
		t.Fatal(err)
	}
	locked, _ := f.svc.Activity(ActivityFilter{})
	if locked.Readable || locked.Note != "Unlock the vault to read the log." || len(locked.Items) != 0 {
		t.Fatalf("locked activity: %+v", locked)
	}
	st := settledStatus(t, f.svc)
	if st.State != "intact" || st.SignedSize != st.Entries || st.FirstBad != -1 {
		t.Fatalf("after lock the log must be intact and fully signed: %+v", st)
	}
	if err := f.vault.Unlock(vault.Passphrase("correct horse battery")); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(activityTypes(t, f.svc), " ")
	if want := "vault_unlocked: vault_locked:user gateway_started: vault_unlocked:vault_created"; got != want {
		t.Fatalf("activity %q, want %q", got, want)
	}
	if s := f.svc.Sessions(PageRequest{}); !s.Readable || len(s.Sessions) != 0 {
		t.Fatalf("sessions: %+v", s)
	}
	waitFor(t, func() bool { return strings.Contains(f.rec.all(), EventAuditChanged) })

	// A restart rebuilds the same views from the log.
	f.close()
	g := newAuditFixture(t, f.dir)
	if st := g.svc.Status(); st.State != "verifying" && st.State != "intact" {
		t.Fatalf("right after restart: %+v", st)
	}
	if st := settledStatus(t, g.svc); st.State != "intact" || !st.Writing {
		t.Fatalf("after restart: %+v", st)
	}
	if err := g.vault.Unlock(vault.Passphrase("correct horse battery")); err != nil {
		t.Fatal(err)
	}
	got = strings.Join(activityTypes(t, g.svc), " ")
	if want := "vault_unlocked: gateway_started: gateway_stopped: vault_locked:test_end vault_unlocked: vault_locked:user gateway_started: vault_unlocked:vault_created"; got != want {
		t.Fatalf("after restart %q\nthe first run's log:\n%s\nthe second's:\n%s", got, f.logs.String(), g.logs.String())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAuditServiceTamperedLogIsShownNotRepaired(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	f.close()
	logPath := filepath.Join(f.dir, "audit", audit.LogFile)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(logPath, b, 0o600); err != nil {
		t.Fatal(err)
	}

	g := newAuditFixture(t, f.dir)
	// Open trusts the signed tree state and verifies the rest in the
	// background: the banner says "verifying", then "tampered", and the
	// log stops taking entries.
	st := settledStatus(t, g.svc)
	if st.State != "tampered" || st.Writing || st.Problem == "" || st.Reason == "" {
		t.Fatalf("tampered log: %+v", st)
	}
	if err := g.vault.Unlock(vault.Passphrase("correct horse battery")); err != nil {
		t.Fatal(err)
	}
	g.vault.Lock("user")
	after, _ := os.ReadFile(logPath)
	if !bytes.Equal(after, b) {
		t.Fatal("the tampered log was modified")
	}
	if _, err := g.svc.ExportCheckpoint(); err == nil {
		t.Fatal("exported a checkpoint of a tampered log")
	}
}

func TestAuditServiceExportCheckpoint(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "kept-elsewhere.txt")
	var asked string
	f.svc.setSaveDialog(func(name string) (string, error) { asked = name; return out, nil })
	res, err := f.svc.ExportCheckpoint()
	if err != nil || !res.Saved || res.Path != out || res.Size == 0 || res.TreeHead == "" {
		t.Fatalf("export: %+v %v", res, err)
	}
	if !strings.HasPrefix(asked, "yett-audit-checkpoint-") {
		t.Fatalf("default name %q", asked)
	}
	held, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f.vault.Lock("user") // more entries after the held checkpoint
	rep := audit.Verify(filepath.Join(f.dir, "audit", audit.LogFile), audit.VerifyOptions{Held: held})
	if rep.Status != audit.StatusIntact || !rep.HeldOK {
		t.Fatalf("the saved checkpoint does not verify against the log: %+v", rep)
	}

	f.svc.setSaveDialog(func(string) (string, error) { return "", nil })
	if res, err := f.svc.ExportCheckpoint(); err != nil || res.Saved {
		t.Fatalf("cancelled: %+v %v", res, err)
	}
}

func TestAuditServiceActivityFilterAndRedaction(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.vault.Credentials().Add(vault.NewCredential{
		Name: "tracker", Secret: vault.NewSecret([]byte(canary)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{"api.example.com"}, Approval: vault.ApprovalSession,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Activity(ActivityFilter{From: "yesterday"}); err == nil {
		t.Fatal("a bad time was accepted")
	}
	future, _ := f.svc.Activity(ActivityFilter{From: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	if !future.Readable || len(future.Items) != 0 {
		t.Fatalf("future range: %+v", future)
	}
	calls, _ := f.svc.Activity(ActivityFilter{Channel: "http"})
	if len(calls.Items) != 0 {
		t.Fatalf("no calls were made: %+v", calls)
	}
	f.vault.Lock("user")
	f.vault.Unlock(vault.Passphrase("correct horse battery"))

	act, _ := f.svc.Activity(ActivityFilter{})
	all, _ := json.Marshal([]any{f.svc.Status(), f.svc.Sessions(PageRequest{}), act})
	logBytes, _ := os.ReadFile(filepath.Join(f.dir, "audit", audit.LogFile))
	for name, b := range map[string][]byte{"views": all, "log": logBytes, "events": []byte(f.rec.all()), "app log": f.logs.Bytes()} {
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("the canary secret is in the %s", name)
		}
	}
}

// A vault reset sets the old vault aside and with it the only key to the old
// log: the log is set aside beside it, untouched, and a new one starts.
func TestAuditServiceVaultResetSetsTheLogAside(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	f.vault.Lock("user")
	old, _ := os.ReadFile(filepath.Join(f.dir, "audit", audit.LogFile))
	if err := f.vault.Reset(); err != nil {
		t.Fatal(err)
	}
	asides, _ := filepath.Glob(filepath.Join(f.dir, "audit.reset-*"))
	if len(asides) != 1 {
		t.Fatalf("set aside: %v", asides)
	}
	// Set aside as it was, after the gateway that wrote to it stopped: the
	// old bytes are all there, and the log verifies with its checkpoint.
	kept, _ := os.ReadFile(filepath.Join(asides[0], audit.LogFile))
	if !bytes.HasPrefix(kept, old) {
		t.Fatal("the old log was changed when set aside")
	}
	if rep := audit.Verify(filepath.Join(asides[0], audit.LogFile), audit.VerifyOptions{}); rep.Status != audit.StatusIntact {
		t.Fatalf("the log set aside does not verify: %+v", rep)
	}
	if err := f.vault.Create(vault.Passphrase("another horse battery"), false); err != nil {
		t.Fatal(err)
	}
	if st := settledStatus(t, f.svc); st.State != "intact" || !st.Writing || st.Problem != "" {
		t.Fatalf("after the new vault: %+v", st)
	}
	if got := strings.Join(activityTypes(t, f.svc), " "); got != "gateway_started: vault_unlocked:vault_created" {
		t.Fatalf("new log %q", got)
	}
}

// The recipient a locked vault reports is read from the file unauthenticated.
// If someone swaps it before the app starts and restores it before the
// unlock (so the unlock succeeds), the app notices at that unlock, reopens
// the log with the authenticated recipient and says so.
func TestAuditServiceRecipientSwappedWhileLocked(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	real, _ := f.vault.AuditRecipient()
	f.close()

	attacker, _ := age.GenerateX25519Identity()
	swap := func(from, to string) {
		t.Helper()
		db, err := store.Open(filepath.Join(f.dir, vault.FileName), nil) // existing file: no migrations to run
		if err != nil {
			t.Fatal(err)
		}
		var man []byte
		if err := db.Raw(`SELECT manifest FROM vault_meta`).Row().Scan(&man); err != nil {
			t.Fatal(err)
		}
		man = bytes.Replace(man, []byte(from), []byte(to), 1)
		if err := db.Exec(`UPDATE vault_meta SET manifest = ?`, man).Error; err != nil {
			t.Fatal(err)
		}
		store.Close(db)
	}
	swap(real, attacker.Recipient().String())
	g := newAuditFixture(t, f.dir)
	if got, _ := g.vault.AuditRecipient(); got == real {
		t.Fatal("self-check: the swap did not take")
	}
	swap(attacker.Recipient().String(), real)
	if err := g.vault.Unlock(vault.Passphrase("correct horse battery")); err != nil {
		t.Fatal(err)
	}
	st := g.svc.Status()
	if !st.Writing || !strings.Contains(st.Problem, "audit key changed") {
		t.Fatalf("the swap went unnoticed: %+v", st)
	}
	if now := g.keeper.State().AuditRecipient; now != real {
		t.Fatal("the log was not reopened with the authenticated recipient")
	}
}
