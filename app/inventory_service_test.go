package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

const inventoryCanary = "CANARY-inventory-http-secret-71c3"

// rowByName returns the row named name, or fails.
func (o *oauthApp) rowByName(t *testing.T, name string) InventoryRowView {
	t.Helper()
	rows, err := o.Inventory.Rows()
	if err != nil {
		t.Fatal(err)
	}
	o.show(rows)
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row named %q in %+v", name, rows)
	return InventoryRowView{}
}

// inventoryEdits are the inventory_edited entries of the audit log, as
// "field=value" (the row first when there is one).
func (o *oauthApp) inventoryEdits(t *testing.T) []string {
	t.Helper()
	id, err := o.vault.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for e, err := range audit.ReadEvents(filepath.Join(o.keeper.AuditDir(), audit.LogFile), id) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type == audit.EventInventoryEdited && e.Event.Inventory != nil {
			out = append(out, e.Event.AuthorizationID+" "+e.Event.Inventory.Field+"="+e.Event.Inventory.Value)
		}
	}
	return out
}

// TestInventoryServiceTableEditsExportsAndDrills drives the bound
// inventory service against a real provider, the real keeper and vault:
// both kinds of row and their "not under control" marking, the inline
// edits (each in the audit log), both exports holding no secret, the
// block switch, the drill schedule, and an unattended then a full drill
// reported step by step.
func TestInventoryServiceTableEditsExportsAndDrills(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: oauthCanary})
	o := newOAuthApp(t)
	if _, err := o.Inventory.Rows(); err == nil || err.Error() != errNoInventory.Error() {
		t.Fatalf("before the vault exists: %v, want %q", err, errNoInventory)
	}
	o.create(t)
	waitFor(t, func() bool { _, err := o.Inventory.inventory(); return err == nil })

	f, err := o.OAuth.Connect(clientCredentialsForm(p, oauthCanary))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Vault.AddCredential(NewCredentialForm{
		Name: "status page", Secret: inventoryCanary, Format: "bearer", Hosts: []string{"status.example.com"}, Approval: "session",
	}); err != nil {
		t.Fatal(err)
	}

	ci := o.rowByName(t, "ci robot")
	if ci.ID != f.AuthorizationID || ci.Kind != "oauth" || ci.Controlled || ci.CreatedVia != "client_credentials" ||
		!slices.Equal(ci.Missing, []string{"owner", "backup revoker"}) || ci.Environment != "development" || !ci.Drillable ||
		ci.ReviewBy == "" || !strings.HasPrefix(ci.HeldOn, "this machine (") {
		t.Fatalf("OAuth row: %+v", ci)
	}
	st := o.rowByName(t, "status page")
	if st.Kind != "http_credential" || st.Controlled || st.CreatedVia != "manual_secret" || st.Drillable ||
		!slices.Equal(st.Missing, []string{"environment", "owner", "backup revoker"}) || st.Provider != "status.example.com" {
		t.Fatalf("HTTP credential row: %+v", st)
	}

	// Inline edits, refused with the rule and kept with an audit entry.
	for _, bad := range []struct{ field, value, want string }{
		{"review_by", "1/2/2030", "YYYY-MM-DD"},
		{"environment", "prod", "development, staging or production"},
		{"owner", "two\nlines", "one line"},
		{"secret", "x", "not an editable column"},
	} {
		if err := o.Inventory.SetField(ci.ID, bad.field, bad.value); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("SetField(%s, %q): %v, want %q", bad.field, bad.value, err, bad.want)
		}
	}
	if err := o.Inventory.SetField("nope", "owner", "x"); err == nil || err.Error() != "There is no such row in the inventory." {
		t.Fatalf("unknown row: %v", err)
	}
	for _, e := range []struct{ id, field, value string }{
		{ci.ID, "owner", "alice@example.com"}, {ci.ID, "backup_revoker", "bob@example.com"}, {ci.ID, "environment", "staging"},
		{ci.ID, "review_by", "2031-03-04"},
		{st.ID, "owner", "carol@example.com"}, {st.ID, "backup_revoker", "dan@example.com"}, {st.ID, "environment", "production"},
	} {
		if err := o.Inventory.SetField(e.id, e.field, e.value); err != nil {
			t.Fatalf("SetField(%s, %s): %v", e.field, e.value, err)
		}
	}
	ci, st = o.rowByName(t, "ci robot"), o.rowByName(t, "status page")
	if !ci.Controlled || len(ci.Missing) != 0 || ci.Owner != "alice@example.com" || ci.Environment != "staging" ||
		ci.ReviewBy != "2031-03-04T00:00:00Z" || !st.Controlled || st.Environment != "production" {
		t.Fatalf("after the edits: %+v\n%+v", ci, st)
	}
	edits := o.inventoryEdits(t)
	for _, want := range []string{ci.ID + " owner=alice@example.com", ci.ID + " review_by=2031-03-04", st.ID + " environment=production"} {
		if !slices.Contains(edits, want) {
			t.Errorf("audit log lacks %q: %q", want, edits)
		}
	}

	// Exports, through the save dialog, of the filtered table.
	dir := t.TempDir()
	var asked []string
	o.Inventory.setSaveDialog(func(title, name string) (string, error) {
		asked = append(asked, name)
		return filepath.Join(dir, name), nil
	})
	csvRes, err := o.Inventory.Export("csv", InventoryFilter{})
	if err != nil || !csvRes.Saved {
		t.Fatalf("csv export: %+v %v", csvRes, err)
	}
	jsonRes, err := o.Inventory.Export("json", InventoryFilter{Text: "status"})
	if err != nil || !jsonRes.Saved {
		t.Fatalf("json export: %+v %v", jsonRes, err)
	}
	o.show(csvRes)
	csvText, _ := os.ReadFile(csvRes.Path)
	jsonText, _ := os.ReadFile(jsonRes.Path)
	if !strings.Contains(string(csvText), "ci robot") || !strings.Contains(string(csvText), "status page") ||
		!strings.HasPrefix(string(csvText), "provider,account,authorization id") {
		t.Errorf("csv export:\n%s", csvText)
	}
	var exported struct {
		Rows []struct {
			Name string `json:"name"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(jsonText, &exported); err != nil || len(exported.Rows) != 1 || exported.Rows[0].Name != "status page" {
		t.Errorf("json export of the filtered table: %v\n%s", err, jsonText)
	}
	for _, b := range [][]byte{csvText, jsonText} {
		for _, secret := range []string{inventoryCanary, oauthCanary} {
			if strings.Contains(string(b), secret) {
				t.Errorf("an export carries a canary secret")
			}
		}
	}
	if _, err := o.Inventory.Export("xml", InventoryFilter{}); err == nil {
		t.Error("an xml export was accepted")
	}
	o.Inventory.setSaveDialog(func(string, string) (string, error) { return "", nil })
	if r, err := o.Inventory.Export("csv", InventoryFilter{}); err != nil || r.Saved {
		t.Errorf("cancelled export: %+v %v", r, err)
	}

	// The block switch and the schedule.
	if s, err := o.Inventory.Settings(); err != nil || s.BlockUncontrolled {
		t.Fatalf("default settings: %+v %v", s, err)
	}
	if err := o.Inventory.SetBlockUncontrolled(true); err != nil {
		t.Fatal(err)
	}
	if s, _ := o.Inventory.Settings(); !s.BlockUncontrolled {
		t.Fatal("the block switch did not stick")
	}
	if err := o.Inventory.SetBlockUncontrolled(false); err != nil {
		t.Fatal(err)
	}
	if err := o.Inventory.SetDrillSchedule(ci.ID, 0, "unattended"); err == nil || !strings.Contains(err.Error(), "1 to 3650 days") {
		t.Errorf("a 0-day schedule: %v", err)
	}
	if err := o.Inventory.SetDrillSchedule(st.ID, 30, "unattended"); err == nil || !strings.Contains(err.Error(), "cannot be drilled") {
		t.Errorf("a schedule on an HTTP credential: %v", err)
	}
	if err := o.Inventory.SetDrillSchedule(ci.ID, 30, "full"); err != nil {
		t.Fatal(err)
	}
	if ci = o.rowByName(t, "ci robot"); ci.DrillEveryDays != 30 || ci.DrillKind != "full" || ci.NextDrill == "" {
		t.Fatalf("schedule: %+v", ci)
	}

	// Drills: a drill client calls one of its named operations.
	if err := o.OAuth.SaveOperation(OperationView{
		Name: "tracker.list_items", AuthorizationID: ci.ID, Method: "GET", URLTemplate: p.URL + "/resource", Approval: "session",
		Params: []ParamView{},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Inventory.RunDrill(st.ID, "unattended"); err == nil || !strings.Contains(err.Error(), "cannot be drilled") {
		t.Errorf("drilling an HTTP credential: %v", err)
	}
	if _, err := o.Inventory.RunDrill(ci.ID, "sideways"); err == nil || !strings.Contains(err.Error(), "full or unattended") {
		t.Errorf("an unknown drill kind: %v", err)
	}
	un, err := o.Inventory.RunDrill(ci.ID, "unattended")
	if err != nil {
		t.Fatal(err)
	}
	o.show(un)
	logDrill(t, un)
	if !un.Passed || un.Running || un.EndState != "active" || len(un.NotExercised) == 0 || len(un.Steps) == 0 {
		t.Fatalf("unattended drill: %+v", un)
	}
	full, err := o.Inventory.RunDrill(ci.ID, "full")
	if err != nil {
		t.Fatal(err)
	}
	o.show(full)
	logDrill(t, full)
	var names []string
	for _, s := range full.Steps {
		names = append(names, s.Name)
		if !s.Passed || s.Did == "" || len(s.Evidence) == 0 || s.StartedAt == "" || s.AuditIndex == 0 {
			t.Errorf("full drill step %+v", s)
		}
	}
	if want := []string{"local_disable", "provider_revocation", "call_refused", "stays_refused", "audit_names_users"}; !slices.Equal(names, want) {
		t.Fatalf("full drill steps %q, want %q", names, want)
	}
	if !full.Passed || full.EndState != "revoked" || full.Advice == "" {
		t.Fatalf("full drill: %+v", full)
	}
	// The window saw each drill step by step, and the row says so.
	waitFor(t, func() bool { return o.countEvents(EventInventoryDrill) >= len(un.Steps)+len(full.Steps) })
	if !strings.Contains(o.rec.all(), `"id":"`+full.ID+`"`) {
		t.Error("no drill event carries the full drill's report")
	}
	if ci = o.rowByName(t, "ci robot"); ci.State != "revoked" || ci.LastDrillID != full.ID || ci.LastDrillKind != "full" || !ci.LastDrillPassed {
		t.Fatalf("row after the full drill: %+v", ci)
	}
	if _, err := o.Inventory.RunDrill(ci.ID, "full"); err == nil || !strings.Contains(err.Error(), "cannot be drilled") {
		t.Errorf("drilling a revoked authorization: %v", err)
	}
	reps, err := o.Inventory.Drills(ci.ID)
	if err != nil || len(reps) != 2 || reps[0].ID != full.ID || reps[1].ID != un.ID {
		t.Fatalf("drill history: %v %+v", err, reps)
	}
	o.Inventory.setSaveDialog(func(_, name string) (string, error) { return filepath.Join(dir, name), nil })
	dr, err := o.Inventory.ExportDrill(full.ID)
	if err != nil || !dr.Saved {
		t.Fatalf("drill export: %+v %v", dr, err)
	}
	b, _ := os.ReadFile(dr.Path)
	if !strings.Contains(string(b), `"provider_revocation"`) || strings.Contains(string(b), oauthCanary) {
		t.Errorf("drill export:\n%s", b)
	}
	if _, err := o.Inventory.ExportDrill("dr-nope"); err == nil {
		t.Error("exporting an unknown drill succeeded")
	}
	o.noSecret(t, oauthCanary)
	o.noSecret(t, inventoryCanary)
}

func logDrill(t *testing.T, r DrillReportView) {
	t.Helper()
	for _, s := range r.Steps {
		t.Logf("%s drill: %-20s %-5v %5d ms  %s", r.Kind, s.Name, s.Passed, s.DurationMS, strings.Join(s.Evidence, "; "))
	}
	if !r.Passed {
		t.Logf("%s drill advice: %s", r.Kind, r.Advice)
	}
}

// TestConnectionsReadAndWriteTheInventory: the Connections cards show what
// the owner inventory holds, their edits go through it (audited), and their
// block switch is the inventory's, the one the gateway obeys.
func TestConnectionsReadAndWriteTheInventory(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: oauthCanary})
	o := newOAuthApp(t)
	o.create(t)
	waitFor(t, func() bool { _, err := o.Inventory.inventory(); return err == nil })
	f, err := o.OAuth.Connect(clientCredentialsForm(p, oauthCanary))
	if err != nil {
		t.Fatal(err)
	}
	id := f.AuthorizationID

	if err := o.Inventory.SetField(id, "owner", "alice@example.com"); err != nil {
		t.Fatal(err)
	}
	if a := o.only(t); a.Owner != "alice@example.com" || a.Controlled ||
		!slices.Equal(a.Problems, []string{"no backup revoker: nobody else is named who may revoke it"}) {
		t.Fatalf("card after an inventory edit: %+v", a)
	}
	if err := o.OAuth.UpdateInventory(id, InventoryForm{Owner: "alice@example.com", BackupRevoker: "bob@example.com", ReviewBy: "2030-01-31"}); err != nil {
		t.Fatal(err)
	}
	row := o.rowByName(t, "ci robot")
	if row.BackupRevoker != "bob@example.com" || row.ReviewBy != "2030-01-31T00:00:00Z" || !row.Controlled {
		t.Fatalf("inventory row after a Connections edit: %+v", row)
	}
	edits := o.inventoryEdits(t)
	// The owner did not change, so only the two changed fields are edits.
	if want := []string{id + " owner=alice@example.com", id + " backup_revoker=bob@example.com", id + " review_by=2030-01-31"}; !slices.Equal(edits, want) {
		t.Fatalf("audited edits %q, want %q", edits, want)
	}

	if err := o.OAuth.SetBlockUncontrolled(true); err != nil {
		t.Fatal(err)
	}
	if s, err := o.Inventory.Settings(); err != nil || !s.BlockUncontrolled {
		t.Fatalf("the Connections switch is not the inventory's: %+v %v", s, err)
	}
	if err := o.Inventory.SetBlockUncontrolled(false); err != nil {
		t.Fatal(err)
	}
	if s, err := o.OAuth.Settings(); err != nil || s.BlockUncontrolled {
		t.Fatalf("Connections does not show the inventory's switch: %+v %v", s, err)
	}
}
