package keeper

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/notify"
	"github.com/yettdev/yett/backend/store"
	"github.com/yettdev/yett/backend/vault"
)

// Issue 18, item 10: the controls that loosen a rule are sealed in the
// vault. Before, the window-only list lived in notifications.json and the
// block switch in inventory.db, and either could be edited on disk before
// the next start, unaudited; the next start then went by the edit. Now an
// earlier version's files are carried over once, and edits made to them
// after that change nothing and are recorded.
func TestControlsAreSealedNotFiles(t *testing.T) {
	dir := t.TempDir()
	v := openVault(t, dir)
	if err := v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	v.Lock("test")
	// An earlier version's choices, in their files.
	if err := notify.SavePolicy(dir, notify.Policy{SessionCards: true, CallCards: true, WindowOnly: []string{"cred_sensitive"}}); err != nil {
		t.Fatal(err)
	}
	k, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(vault.Passphrase(pass)); err != nil {
		t.Fatal(err)
	}
	if p := k.NotificationPolicy(); len(p.WindowOnly) != 1 || p.WindowOnly[0] != "cred_sensitive" {
		t.Fatalf("the earlier version's policy was not carried over: %+v", p)
	}
	if _, err := os.Stat(filepath.Join(dir, notify.PolicyFile)); !os.IsNotExist(err) {
		t.Fatalf("the carried-over policy file is still there: %v", err)
	}
	if err := k.SetBlockUncontrolled(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if err := k.SetVerification(VerifyEvery); err != nil {
		t.Fatal(err)
	}
	k.Close()

	// What an agent does between two starts: loosen everything on disk.
	if err := notify.SavePolicy(dir, notify.Policy{SessionCards: true, CallCards: true, WindowOnly: []string{}}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, inventory.FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`UPDATE settings SET block_uncontrolled = 0 WHERE id = 1`).Error; err != nil {
		t.Fatal(err)
	}
	store.Close(db)

	k2, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close()
	if err := v.Unlock(vault.Passphrase(pass)); err != nil {
		t.Fatal(err)
	}
	if p := k2.NotificationPolicy(); len(p.WindowOnly) != 1 {
		t.Fatalf("an edited notifications.json loosened the policy: %+v", p)
	}
	st := k2.State()
	if st.Inventory == nil || !st.Inventory.Settings().BlockUncontrolled {
		t.Fatal("an edited inventory.db turned the block switch off")
	}
	if mode, _ := k2.Verification(); mode != VerifyEvery {
		t.Fatalf("verification %q after a restart", mode)
	}
	var ignored, sealed int
	for _, e := range events(t, v, dir) {
		if e.Type == audit.EventVaultChanged && e.Reason == "ignored_control_file" {
			ignored++
			if e.VaultChange == nil || e.VaultChange.Name != notify.PolicyFile {
				t.Errorf("the ignored file is not named: %+v", e.VaultChange)
			}
			continue
		}
		if e.Type == audit.EventVaultChanged && e.VaultChange != nil && e.VaultChange.Change == string(vault.ChangeControls) {
			sealed++
			if !strings.Contains(e.VaultChange.Name, ":") && !strings.Contains(e.VaultChange.Name, "sealed") {
				t.Errorf("a controls change that does not say what changed: %+v", e.VaultChange)
			}
		}
	}
	if ignored != 1 || sealed != 3 {
		t.Fatalf("%d ignored control files and %d sealed control changes recorded, want 1 and 3", ignored, sealed)
	}
}
