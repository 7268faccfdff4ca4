package inventory_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/vault"
)

// TestSSHHostsAreRows: an SSH host is a row like every other
// authorization (its declared owner taken over, its missing backup
// revoker named), never with its private key, and while uncontrolled rows
// are blocked an agent's ssh.exec to it is refused before anything else.
func TestSSHHostsAreRows(t *testing.T) {
	d := newDesk(t, deskOpts{})
	pair, err := sshaction.GenerateEd25519("yett:web-1")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Split(string(pair.PEM), "\n")[1]
	h, err := d.v.SSHHosts().Add(vault.NewSSHHost{Name: "web-1", Address: "127.0.0.1", Port: 2222, User: "deploy",
		PrivateKey: vault.NewSecret(pair.PEM), PublicKey: pair.Public, KeyFingerprint: pair.Fingerprint,
		SSHHostSettings: vault.SSHHostSettings{Approval: vault.ApprovalPerCall, Rules: []string{"exact: uptime"}, Owner: "ana"}})
	if err != nil {
		t.Fatal(err)
	}
	r := d.row(h.ID)
	if r.Kind != inventory.KindSSH || r.Owner != "ana" || r.Controlled || !slices.Contains(r.Missing, inventory.ColBackup) || slices.Contains(r.Missing, inventory.ColOwner) {
		t.Fatalf("the host's row: %+v", r)
	}
	if r.AccountRef != "deploy@[127.0.0.1]:2222" || !slices.Equal(r.Scopes, []string{"exact: uptime"}) ||
		r.State != "needs_reconnection" || !strings.Contains(r.DisableProcedure, "authorized_keys") {
		t.Fatalf("the host's row: %+v", r)
	}
	for _, format := range []string{"csv", "json"} {
		out, err := d.inv().Export(d.ctx(), inventory.Filter{}, format)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), body) || !strings.Contains(string(out), "web-1") {
			t.Fatalf("the %s export: holds the key or misses the host", format)
		}
	}

	if err := d.inv().SetBlockUncontrolled(d.ctx(), true); err != nil {
		t.Fatal(err)
	}
	a := d.agent()
	args := map[string]any{"host": "web-1", "command": "uptime", "idempotency_key": "ssh-block-1"}
	res := a.call(agentapi.ToolSSHExec, args)
	if !res.IsError || !strings.HasPrefix(res.Text, agentapi.CodeDenied+":") || !strings.Contains(res.Text, "not under control") {
		t.Fatalf("ssh.exec to an uncontrolled host: %+v", res)
	}
	found := false
	for _, e := range d.events() {
		if ev := e.Event; ev.Type == audit.EventActionDenied && ev.Reason == audit.ReasonUncontrolled && ev.Action != nil && ev.Action.CredentialRef == h.ID {
			found = true
		}
	}
	if !found {
		t.Error("the refusal is not in the audit log as uncontrolled")
	}
	// Once someone answers for it, the host's own checks come next (it has
	// no pinned host key yet).
	if err := d.inv().SetField(d.ctx(), h.ID, inventory.FieldBackupRevoker, "luis"); err != nil {
		t.Fatal(err)
	}
	if err := d.inv().SetField(d.ctx(), h.ID, inventory.FieldEnvironment, "production"); err != nil {
		t.Fatal(err)
	}
	if r := d.row(h.ID); !r.Controlled {
		t.Fatalf("still not under control: %v", r.Missing)
	}
	args["idempotency_key"] = "ssh-block-2"
	res = a.call(agentapi.ToolSSHExec, args)
	if !res.IsError || strings.Contains(res.Text, "not under control") {
		t.Fatalf("a controlled host without a pin: %+v", res)
	}
	if err := d.inv().SetBlockUncontrolled(d.ctx(), false); err != nil {
		t.Fatal(err)
	}
}

// TestSSHHostOwnersAreOne: an SSH host's owner and backup revoker live on
// the host record, and the inventory shows and edits that one copy: an
// edit in the Hosts view (the vault record) shows in the row however late
// it comes, and an edit in the inventory lands on the host record.
func TestSSHHostOwnersAreOne(t *testing.T) {
	d := newDesk(t, deskOpts{})
	pair, err := sshaction.GenerateEd25519("yett:web-2")
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.v.SSHHosts().Add(vault.NewSSHHost{Name: "web-2", Address: "127.0.0.1", Port: 22, User: "deploy",
		PrivateKey: vault.NewSecret(pair.PEM), PublicKey: pair.Public, KeyFingerprint: pair.Fingerprint,
		SSHHostSettings: vault.SSHHostSettings{Approval: vault.ApprovalPerCall, Rules: []string{"exact: uptime"}, Owner: "ana"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := d.row(h.ID); r.Owner != "ana" || r.BackupRevoker != "" {
		t.Fatalf("the host's row before any edit: owner %q, backup %q", r.Owner, r.BackupRevoker)
	}
	// The Hosts view edits the host record after the inventory saw it.
	s := vault.SSHHostSettings{Approval: vault.ApprovalPerCall, Rules: []string{"exact: uptime"}, Owner: "marta", BackupRevoker: "luis"}
	if _, err := d.v.SSHHosts().Update(h.ID, s); err != nil {
		t.Fatal(err)
	}
	if r := d.row(h.ID); r.Owner != "marta" || r.BackupRevoker != "luis" {
		t.Fatalf("a Hosts edit did not reach the inventory: owner %q, backup %q", r.Owner, r.BackupRevoker)
	}
	// The inventory edits what the host record holds.
	if err := d.inv().SetField(d.ctx(), h.ID, inventory.FieldOwner, "pablo"); err != nil {
		t.Fatal(err)
	}
	if err := d.inv().SetField(d.ctx(), h.ID, inventory.FieldBackupRevoker, ""); err != nil {
		t.Fatal(err)
	}
	got, err := d.v.SSHHosts().Get(h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != "pablo" || got.BackupRevoker != "" || !slices.Equal(got.Rules, []string{"exact: uptime"}) || got.Approval != vault.ApprovalPerCall {
		t.Fatalf("an inventory edit did not land on the host record alone: %+v", got)
	}
	if r := d.row(h.ID); r.Owner != "pablo" || r.Controlled || !slices.Contains(r.Missing, inventory.ColBackup) {
		t.Fatalf("the row after the inventory edit: %+v", r)
	}
	edits := 0
	for _, e := range d.events() {
		if ev := e.Event; ev.Type == audit.EventInventoryEdited && ev.AuthorizationID == h.ID {
			edits++
		}
	}
	if edits != 2 {
		t.Fatalf("%d audited inventory edits of the host, want 2", edits)
	}
}
