package keeper

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// TestSetupKeeperAtTheTerminal: the keeper of the CLI's setup commands
// serves no agents, names no gateway, and records what the person does
// (the vault's creation, a connection, an operation saved and removed)
// with "terminal" as its surface. While it holds the log, another keeper
// of the data directory knows the log is held elsewhere.
func TestSetupKeeperAtTheTerminal(t *testing.T) {
	const secret = "CANARY-keeper-client-secret-5d1f"
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: secret})
	dir, run := t.TempDir(), t.TempDir()
	v := openVault(t, dir)
	k, err := Open(Config{DataDir: dir, RuntimeDir: run, Vault: v, Origin: "terminal", NoGateway: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	st := k.State()
	if st.Broker != nil || st.SocketPath != "" || st.OAuth == nil || st.Operations == nil || !st.AuditWriting {
		t.Fatalf("setup keeper: %+v", st)
	}
	if entries, _ := os.ReadDir(run); len(entries) != 0 {
		t.Errorf("the setup keeper left %d files in the runtime directory (a gateway socket or lock?)", len(entries))
	}

	// Another process's keeper (the app starting now) finds the log held.
	v2 := openVault(t, dir)
	other, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v2})
	if err != nil {
		t.Fatal(err)
	}
	if ost := other.State(); !ost.AuditHeldElsewhere || ost.AuditWriting {
		t.Errorf("the second keeper: %+v, want the log held elsewhere", ost)
	}
	other.Close()

	f, err := st.OAuth.Connect(context.Background(), oauth.ConnectRequest{
		Name: "tracker", Provider: "custom", Endpoints: oauth.Endpoints{Issuer: p.URL}, ClientID: oauthtest.DefaultClientID,
		ClientAuth: oauth.ClientAuthSecret, ClientSecret: []byte(secret), Scopes: []string{"read"},
		Environment: "development", Flow: oauth.FlowClientCredentials, Owner: "alice", BackupRevoker: "bob",
	})
	if err != nil {
		t.Fatal(err)
	}
	op := operation.Operation{Name: "tracker.list_items", AuthorizationID: f.AuthorizationID, Method: "GET",
		URLTemplate: p.URL + "/resource", Approval: operation.ApprovalPerCall}
	if err := st.Operations.Save(op); err != nil {
		t.Fatal(err)
	}
	if err := st.Operations.Remove(op.Name); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(vault.Passphrase(pass)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events(t, v, dir) {
		if e.BootID != "" || e.Type == audit.EventGatewayStarted {
			t.Errorf("%s names a gateway (%q) though none ran", e.Type, e.BootID)
		}
		if e.Surface != "terminal" {
			t.Errorf("%s with surface %q, want terminal", e.Type, e.Surface)
		}
		switch e.Type {
		case audit.EventOperationSaved:
			if n := e.NamedOperation; n == nil || n.Name != op.Name || n.Method != "GET" || n.Approval != "per_call" ||
				n.Target != p.URL[len("http://"):] || e.AuthorizationID != f.AuthorizationID {
				t.Errorf("operation_saved: %+v %+v", e, e.NamedOperation)
			}
		case audit.EventOperationRemoved:
			if n := e.NamedOperation; n == nil || n.Name != op.Name {
				t.Errorf("operation_removed: %+v", e.NamedOperation)
			}
		}
		got = append(got, string(e.Type))
	}
	want := []string{"vault_unlocked", "authorization_connected", "operation_saved", "operation_removed", "vault_locked"}
	if len(got) != len(want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("recorded %v, want %v", got, want)
		}
	}
}

// TestRecordsVaultChanges: a person's changes to the vault are recorded,
// with the credential they touched (a removal undone too) or what changed
// (the backup reminder), from whichever front end (here the
// app's keeper, which names no surface); the secret is in no entry.
func TestRecordsVaultChanges(t *testing.T) {
	const secret = "CANARY-keeper-vault-change-71b2"
	dir := t.TempDir()
	v := openVault(t, dir)
	k, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	c, err := v.Credentials().Add(vault.NewCredential{Name: "tracker", Secret: vault.NewSecret([]byte(secret)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{"api.example.com"}, Approval: vault.ApprovalSession})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Credentials().Remove(c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Credentials().Restore(c.ID); err != nil {
		t.Fatal(err)
	}
	if err := v.SetBackupReminderDays(7); err != nil {
		t.Fatal(err)
	}
	k.Close()
	v.Unlock(vault.Passphrase(pass))
	var got []string
	for _, e := range events(t, v, dir) {
		if b, _ := json.Marshal(e); strings.Contains(string(b), secret) {
			t.Fatalf("the secret is in a %s entry", e.Type)
		}
		if e.Type != audit.EventVaultChanged {
			continue
		}
		vc := e.VaultChange
		if vc != nil && vc.Change == string(vault.ChangeBackupReminder) {
			if vc.Name != "after 7 days" || vc.CredentialID != "" {
				t.Errorf("the backup reminder's change: %+v", vc)
			}
			got = append(got, vc.Change)
			continue
		}
		if vc == nil || vc.CredentialID != c.ID || vc.Name != "tracker" || e.Surface != "" {
			t.Errorf("vault_changed: %+v %+v", e, vc)
			continue
		}
		got = append(got, vc.Change)
	}
	if strings.Join(got, " ") != "credential_added credential_removed credential_restored backup_reminder_changed" {
		t.Fatalf("recorded %v", got)
	}
}
