package app

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/ptytest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

const frontEndPass = "front end passphrase 1"

// TestVaultEventsSameForBothFrontEnds: the desktop app's service layer and
// `yett serve` each unlock, lock, unlock and stop on a vault made the same
// way; the audit logs they leave hold the same vault events, each under
// the boot id of the gateway that ran. One composition root
// (backend/keeper) records them for both.
func TestVaultEventsSameForBothFrontEnds(t *testing.T) {
	frontEnds := []struct {
		name string
		run  func(t *testing.T, dataDir, runDir string)
	}{
		{"desktop app", func(t *testing.T, dataDir, runDir string) {
			a, err := New(Config{DataDir: dataDir, RuntimeDir: runDir, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []func() error{
				func() error { _, err := a.Vault.Unlock(frontEndPass); return err },
				func() error { _, err := a.Vault.Lock(); return err },
				func() error { _, err := a.Vault.Unlock(frontEndPass); return err },
			} {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
			a.Close()
		}},
		{"yett serve", func(t *testing.T, dataDir, runDir string) {
			master, slave := ptytest.Open(t)
			var tty syncbuf.Buffer
			go io.Copy(&tty, master)
			cmd := exec.Command(buildYett(t), "serve")
			cmd.Env = append(os.Environ(), "YETT_DATA_DIR="+dataDir, "YETT_RUNTIME_DIR="+runDir, "DBUS_SESSION_BUS_ADDRESS=disabled:")
			ptytest.Attach(cmd, slave)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
			seen := 0
			expect := func(s string) {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for !strings.Contains(tty.String()[seen:], s) {
					if time.Now().After(deadline) {
						t.Fatalf("terminal never showed %q; it shows:\n%s", s, tty.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
				seen += strings.Index(tty.String()[seen:], s) + len(s)
			}
			typeLine := func(s string) { master.Write([]byte(s + "\n")) }
			expect("passphrase:")
			typeLine(frontEndPass)
			expect("gateway listening")
			typeLine("lock")
			expect("Vault locked")
			typeLine("unlock")
			expect("passphrase:")
			typeLine(frontEndPass)
			expect("Vault unlocked")
			typeLine("quit")
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("yett serve did not stop: %s", tty.String())
			}
		}},
	}
	var first []string
	for _, fe := range frontEnds {
		t.Run(fe.name, func(t *testing.T) {
			base, err := os.MkdirTemp("", "yfe") // short: the socket path has a length limit
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(base)
			dataDir, runDir := filepath.Join(base, "data"), filepath.Join(base, "run")
			v, err := vault.Open(dataDir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Create(vault.Passphrase(frontEndPass), false); err != nil {
				t.Fatal(err)
			}
			v.Close()

			fe.run(t, dataDir, runDir)

			v, err = vault.Open(dataDir, vault.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if err := v.Unlock(vault.Passphrase(frontEndPass)); err != nil {
				t.Fatal(err)
			}
			id, err := v.AuditIdentity()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			boot := ""
			for e, err := range audit.ReadEvents(filepath.Join(dataDir, "audit", audit.LogFile), id) {
				if err != nil {
					t.Fatal(err)
				}
				ev := e.Event
				switch ev.Type {
				case audit.EventGatewayStarted:
					boot = ev.BootID
				case audit.EventVaultLocked, audit.EventVaultUnlocked:
					if ev.BootID == "" || ev.BootID != boot {
						t.Errorf("%s under boot %q; the gateway ran under %q", ev.Type, ev.BootID, boot)
					}
					got = append(got, string(ev.Type)+":"+string(ev.Reason))
				}
			}
			want := []string{"vault_unlocked:", "vault_locked:user", "vault_unlocked:", "vault_locked:yett_exit"}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("vault events %v, want %v", got, want)
			}
			if first == nil {
				first = got
			} else if strings.Join(got, " ") != strings.Join(first, " ") {
				t.Fatalf("the front ends disagree: %v and %v", first, got)
			}
		})
	}
}
