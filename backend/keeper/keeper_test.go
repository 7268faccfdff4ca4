package keeper

import (
	"bytes"
	"crypto/sha256"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

const pass = "correct horse battery staple"

func openVault(t testing.TB, dir string) *vault.Vault {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// events decrypts the log of dir with the vault's audit identity.
func events(t testing.TB, v *vault.Vault, dir string) []audit.Event {
	t.Helper()
	id, err := v.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Event
	for e, err := range audit.ReadEvents(filepath.Join(dir, "audit", audit.LogFile), id) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Event)
	}
	return out
}

// Every vault event is recorded once, by the keeper, with the boot id of the
// gateway it runs; the keeper's close locks the vault and says why.
func TestRecordsEveryVaultEventOnce(t *testing.T) {
	dir := t.TempDir()
	v := openVault(t, dir)
	k, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	if st := k.State(); st.AuditWriting || st.Broker != nil {
		t.Fatalf("running before the vault exists: %+v", st)
	}
	if err := v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	if st := k.State(); !st.AuditWriting || st.Broker == nil || st.OAuth == nil || st.SocketPath == "" {
		t.Fatalf("after create: %+v", st)
	}
	v.Lock("user")
	v.Unlock(vault.Passphrase(pass))
	k.Close()
	v.Unlock(vault.Passphrase(pass))
	var got []string
	var boot string
	for _, e := range events(t, v, dir) {
		switch e.Type {
		case audit.EventGatewayStarted:
			boot = e.BootID
		case audit.EventVaultLocked, audit.EventVaultUnlocked:
			if e.BootID == "" || e.BootID != k.BootID() {
				t.Errorf("%s under boot %q, the gateway's is %q", e.Type, e.BootID, k.BootID())
			}
		default:
			continue
		}
		got = append(got, string(e.Type)+":"+string(e.Reason))
	}
	want := "vault_unlocked:vault_created gateway_started: vault_locked:user vault_unlocked: vault_locked:" + ExitReason
	if strings.Join(got, " ") != want {
		t.Fatalf("recorded\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if boot != k.BootID() {
		t.Fatalf("gateway_started under %q, keeper says %q", boot, k.BootID())
	}
}

// A lock whose epoch the disk refused is recorded as such.
func TestLockWithUnsavedEpochIsRecordedSo(t *testing.T) {
	ev := vault.Event{Kind: vault.EventLocked, Reason: "user", EpochNotSaved: true}
	if r := lockReason(ev); r != "user epoch_not_saved" {
		t.Fatalf("reason %q", r)
	}
	long := vault.Event{Kind: vault.EventLocked, Reason: "vault damaged: " + strings.Repeat("x", 200)}
	if r := lockReason(long); len(r) != maxReasonLen {
		t.Fatalf("reason of %d bytes", len(r))
	}
}

// A vault reset stops the gateway and custody and sets the log aside; the
// next Create starts them again on a new log, under a new boot id.
func TestResetSetsTheLogAsideAndStartsAgain(t *testing.T) {
	dir := t.TempDir()
	v := openVault(t, dir)
	k, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	v.Create(vault.Passphrase(pass), false)
	first := k.BootID()
	v.Lock("user")
	if err := v.Reset(); err != nil {
		t.Fatal(err)
	}
	if st := k.State(); st.AuditWriting || st.Broker != nil || st.OAuth != nil {
		t.Fatalf("after reset: %+v", st)
	}
	if asides, _ := filepath.Glob(filepath.Join(dir, "audit.reset-*")); len(asides) != 1 {
		t.Fatalf("set aside: %v", asides)
	}
	v.Create(vault.Passphrase(pass), false)
	if st := k.State(); !st.AuditWriting || st.Broker == nil || st.BootID == first {
		t.Fatalf("after the new vault: %+v (first boot %s)", st, first)
	}
}

// The gateway accepts only the yett CLI it was pointed at; without one it
// accepts any program of the user's, and the log says so.
func TestPinsTheShim(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "yett")
	if err := os.WriteFile(cli, []byte("pretend yett binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	k := &Keeper{cfg: Config{ShimPath: cli}, log: slog.New(slog.NewTextHandler(&logs, nil))}
	want := sha256.Sum256([]byte("pretend yett binary"))
	if got := k.pinShim(); len(got) != 1 || got[0] != want {
		t.Fatalf("pinned %x, want %x", got, want)
	}
	k.cfg.ShimPath = filepath.Join(dir, "missing")
	if got := k.pinShim(); got != nil {
		t.Fatalf("pinned %x for a missing CLI", got)
	}
	if !strings.Contains(logs.String(), "accepts any program") {
		t.Fatalf("missing CLI not logged: %s", logs.String())
	}
}

// The keeper tells subscribers when what runs changes, after its own lock
// is released (a subscriber may ask for the state).
func TestSubscribersHearChanges(t *testing.T) {
	dir := t.TempDir()
	v := openVault(t, dir)
	k, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	heard := make(chan State, 8)
	k.Subscribe(func(st State) {
		_ = k.State() // calling back in does not deadlock
		heard <- st
	})
	v.Create(vault.Passphrase(pass), false)
	select {
	case st := <-heard:
		if st.Broker == nil {
			t.Fatalf("heard %+v", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no change heard")
	}
}
