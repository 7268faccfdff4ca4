package app

import (
	"slices"
	"testing"

	"github.com/yettdev/yett/backend/inventory"
)

// TestHostsViewShowsTheInventorysVerdict: a host's "under control" on the
// Hosts view is the owner inventory's, the one the gateway enforces (it
// also needs an environment), and an owner edited in the Inventory view
// is the host's owner in the Hosts view.
func TestHostsViewShowsTheInventorysVerdict(t *testing.T) {
	o := newOAuthApp(t)
	o.create(t)
	waitFor(t, func() bool { _, err := o.Inventory.inventory(); return err == nil })
	h, err := o.SSH.AddHost(SSHHostForm{Name: "web-1", Address: "192.0.2.1", Port: 22, User: "deploy",
		Settings: SSHSettingsForm{Rules: "exact: uptime", Owner: "ana", BackupRevoker: "luis"}})
	if err != nil {
		t.Fatal(err)
	}
	host := func() SSHHostView {
		t.Helper()
		hosts, err := o.SSH.Hosts()
		if err != nil || len(hosts) != 1 {
			t.Fatalf("%d hosts, %v", len(hosts), err)
		}
		return hosts[0]
	}
	row := o.rowByName(t, "web-1")
	if row.Controlled || !slices.Contains(row.Missing, inventory.ColEnvironment) {
		t.Fatalf("the inventory's row: %+v", row)
	}
	if v := host(); v.Controlled || !slices.Contains(v.Problems, "no environment") {
		t.Fatalf("the Hosts view says under control=%v (%q), the inventory says %v (missing %v)", v.Controlled, v.Problems, row.Controlled, row.Missing)
	}
	// An edit of the inventory alone (the environment) changes the
	// verdict: the Hosts view is told to read again.
	before := o.countEvents(EventSSHChanged)
	if err := o.Inventory.SetField(h.ID, inventory.FieldEnvironment, "production"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return o.countEvents(EventSSHChanged) > before })
	if err := o.Inventory.SetField(h.ID, inventory.FieldOwner, "marta"); err != nil {
		t.Fatal(err)
	}
	if v := host(); !v.Controlled || len(v.Problems) != 1 || v.Settings.Owner != "marta" || v.Settings.BackupRevoker != "luis" {
		// (Its one problem: no pinned host key.)
		t.Fatalf("after the inventory edits: %+v", v)
	}
}
