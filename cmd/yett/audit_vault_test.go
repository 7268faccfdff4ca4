package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

const vaultTestPass = "correct horse battery"

// fixedPassphrase answers with one passphrase and counts the prompts.
type fixedPassphrase struct {
	pass    string
	prompts int
	err     error
}

func (f *fixedPassphrase) Passphrase(string) ([]byte, error) {
	f.prompts++
	return []byte(f.pass), f.err
}

func usePassphrases(t *testing.T, p passphraseSource) {
	old := passphrases
	passphrases = p
	t.Cleanup(func() { passphrases = old })
}

// vaultWithLog makes a real vault and a real audit log encrypted to its
// recipient, as the app does, with events written while the vault is locked.
func vaultWithLog(t *testing.T) (dataDir, secret string) {
	t.Helper()
	dataDir = t.TempDir()
	v, err := vault.Open(dataDir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Create(vault.Passphrase(vaultTestPass), false); err != nil {
		t.Fatal(err)
	}
	id, _ := v.AuditIdentity()
	secret = id.String()
	v.Lock("user")
	recipient, err := v.AuditRecipient()
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	r, _ := age.ParseX25519Recipient(recipient)
	l, _, err := audit.Open(audit.Options{Dir: filepath.Join(dataDir, "audit"), Recipient: r})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	passed := true
	for _, e := range []audit.Event{
		{Type: audit.EventVaultLocked, Time: now, VaultEpoch: 3, Reason: "user"},
		{Type: audit.EventActionDenied, Time: now, SessionID: "S1", Reason: audit.ReasonVaultLocked,
			Action: &audit.Action{RequestID: "Q1", Channel: "http", Operation: "create_issue", Target: "api.example.com"}},
		{Type: audit.EventDrillStarted, Time: now, AuthorizationID: "az-1", Drill: &audit.DrillFacts{DrillID: "dr-1", Kind: "full", Trigger: "person"}},
		{Type: audit.EventDrillStep, Time: now, AuthorizationID: "az-1", Success: &passed, Drill: &audit.DrillFacts{DrillID: "dr-1", Kind: "full",
			Trigger: "person", Step: "provider_revocation", Evidence: "refresh token: revocation answered HTTP 200", DurationMS: 66}},
		{Type: audit.EventDrillFinished, Time: now, AuthorizationID: "az-1", Success: &passed, Drill: &audit.DrillFacts{DrillID: "dr-1", Kind: "full", DurationMS: 292}},
		{Type: audit.EventInventoryEdited, Time: now, AuthorizationID: "az-1", Inventory: &audit.InventoryEdit{Field: "owner", Value: "alice"}},
	} {
		if _, err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dataDir, secret
}

func runYett(t *testing.T, dataDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(vaultTestPass + "\n"), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		switch k {
		case "YETT_DATA_DIR":
			return dataDir
		case "YETT_RUNTIME_DIR":
			return filepath.Join(dataDir, "run")
		}
		return ""
	}}
	code = Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

func TestAuditShowWithVault(t *testing.T) {
	dataDir, secret := vaultWithLog(t)
	src := &fixedPassphrase{pass: vaultTestPass}
	usePassphrases(t, src)

	out, errOut, code := runYett(t, dataDir, "audit", "show", "--format", "table")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if src.prompts != 1 {
		t.Fatalf("asked %d times", src.prompts)
	}
	for _, want := range []string{"vault_locked", "action_denied", "S1", "vault_locked", "http create_issue api.example.com",
		"drill_started", "az-1 full drill dr-1 (person)", "drill_step", "provider_revocation passed in 66 ms: refresh token: revocation answered HTTP 200",
		"drill_finished", "passed in 292 ms", "inventory_edited", "az-1 owner=alice"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, bech, _ := strings.Cut(secret, "AGE-SECRET-KEY-1")
	if strings.Contains(out+errOut, bech) || strings.Contains(out+errOut, vaultTestPass) {
		t.Fatal("the audit key or the passphrase reached the output")
	}

	// The vault was left locked, and a passphrase on stdin is never read.
	v, err := vault.Open(dataDir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st := v.Status().State; st != vault.StateLocked {
		t.Fatalf("vault left %s", st)
	}
	v.Close()

	if _, _, code := runYett(t, dataDir, "audit", "show", "--vault", "--vault-dir", dataDir); code != 0 {
		t.Fatalf("--vault --vault-dir: exit %d", code)
	}
}

func TestAuditShowWithVaultErrors(t *testing.T) {
	dataDir, _ := vaultWithLog(t)
	cases := []struct {
		name string
		src  passphraseSource
		args []string
		want string
	}{
		{"wrong passphrase", &fixedPassphrase{pass: "not the passphrase"}, nil, "wrong passphrase"},
		{"no terminal", &fixedPassphrase{err: errNoTerminal}, nil, "no terminal"},
		{"no vault there", &fixedPassphrase{pass: vaultTestPass}, []string{"--vault-dir", t.TempDir()}, "no vault in"},
		{"both key sources", &fixedPassphrase{pass: vaultTestPass}, []string{"--vault", "--identity", "x"}, "not both"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			usePassphrases(t, tc.src)
			_, errOut, code := runYett(t, dataDir, append([]string{"audit", "show"}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestTTYPassphraseRefusesANonTerminal(t *testing.T) {
	f := filepath.Join(t.TempDir(), "not-a-tty")
	os.WriteFile(f, []byte(vaultTestPass+"\n"), 0o600)
	if _, err := (ttyPassphrase{path: f}).Passphrase("p: "); !errors.Is(err, errNoTerminal) {
		t.Fatalf("a plain file was read as a terminal: %v", err)
	}
	if _, err := (ttyPassphrase{path: filepath.Join(t.TempDir(), "missing")}).Passphrase("p: "); !errors.Is(err, errNoTerminal) {
		t.Fatalf("missing tty: %v", err)
	}
}
