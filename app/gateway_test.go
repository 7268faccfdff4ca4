package app

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The desktop app starts the gateway once its audit log is open (here: at
// Create), the gateway writes into the app's log, and each vault lock and
// unlock is recorded exactly once even though both the app and the gateway
// follow the vault.
func TestAppRunsGatewayOnItsAuditLog(t *testing.T) {
	base := t.TempDir()
	var logs bytes.Buffer
	a, err := New(Config{
		DataDir:    filepath.Join(base, "data"),
		RuntimeDir: filepath.Join(base, "run"),
		Log:        slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sock := filepath.Join(base, "run", "gateway.sock")
	if _, err := os.Stat(sock); err == nil {
		t.Fatal("gateway started before the vault (and its audit key) existed")
	}
	if _, err := a.Vault.Create("correct horse battery staple", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := os.Stat(sock); return err == nil })
	waitFor(t, func() bool { return a.Approvals.current() != nil })

	if _, err := a.Vault.Lock(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Vault.Unlock("correct horse battery staple"); err != nil {
		t.Fatal(err)
	}
	types := activityTypes(t, a.Audit)
	count := func(prefix string) int {
		n := 0
		for _, ty := range types {
			if strings.HasPrefix(ty, prefix) {
				n++
			}
		}
		return n
	}
	if count("gateway_started") != 1 || count("vault_locked:user") != 1 || count("vault_unlocked:") != 2 {
		t.Fatalf("audit trail %v: want one gateway_started, one vault_locked:user and two vault_unlocked (create, unlock)", types)
	}

	// A reset sets the log aside; the gateway goes with it.
	a.vault.Lock("test")
	if err := a.vault.Reset(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return a.Approvals.current() == nil })
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(sock); err == nil {
		t.Fatal("gateway still listening after the vault was reset")
	}
}
