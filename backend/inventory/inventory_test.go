package inventory_test

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

const (
	clientCanary = "CANARY-inventory-client-secret-7a1c"
	httpCanary   = "CANARY-inventory-http-secret-2b9e"
)

// connectCC connects a client-credentials authorization at p as the app
// would, with the owner fields given.
func connectCC(t *testing.T, d *desk, p *oauthtest.Provider, name, owner, backup string) string {
	t.Helper()
	f, err := d.oauth().Connect(d.ctx(), oauth.ConnectRequest{
		Name: name, Provider: "custom", Endpoints: oauth.Endpoints{Issuer: p.URL}, ClientID: oauthtest.DefaultClientID,
		ClientAuth: oauth.ClientAuthSecret, ClientSecret: []byte(clientCanary), Scopes: []string{"read"},
		Environment: "development", Flow: oauth.FlowClientCredentials, Owner: owner, BackupRevoker: backup,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f.AuthorizationID
}

func addCredential(t *testing.T, d *desk, name, host string) string {
	t.Helper()
	cv, err := d.v.Credentials().Add(vault.NewCredential{Name: name, Secret: vault.NewSecret([]byte(httpCanary)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{host}, Approval: vault.ApprovalSession})
	if err != nil {
		t.Fatal(err)
	}
	return cv.ID
}

// TestNotUnderControlNamesWhatIsMissing: every authorization Yett holds is
// a row, OAuth and HTTP credentials alike; a row with a required column
// empty is not under control and names the columns; each inline edit is
// an audit entry, and an OAuth row's environment reaches custody.
func TestNotUnderControlNamesWhatIsMissing(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: clientCanary})
	d := newDesk(t, deskOpts{})
	az := connectCC(t, d, p, "tracker", "alice", "")
	cred := addCredential(t, d, "billing key", "billing.example.com")

	rows := d.rows()
	if len(rows) != 2 {
		t.Fatalf("%d rows, want one per authorization: %+v", len(rows), rows)
	}
	o, h := d.row(az), d.row(cred)
	if o.Kind != inventory.KindOAuth || o.Controlled || !slices.Equal(o.Missing, []string{inventory.ColBackup}) {
		t.Fatalf("OAuth row without a backup revoker: %+v", o)
	}
	if o.Owner != "alice" || o.CreatedVia != oauth.FlowClientCredentials || o.AccountRef == "" || !strings.HasPrefix(o.HeldOn, "this machine (") ||
		o.Provider == "" || !slices.Equal(o.Scopes, []string{"read"}) || o.DisableProcedure == "" || o.ConnectedAt.IsZero() {
		t.Fatalf("OAuth row's columns: %+v", o)
	}
	if want := o.ConnectedAt.Add(inventory.DefaultReviewAfter); !o.ReviewBy.Equal(want) {
		t.Errorf("review date %v, want 90 days after the connection (%v)", o.ReviewBy, want)
	}
	if !o.Drillable || o.NextDrill.IsZero() || o.DrillKind != inventory.DrillUnattended || o.DrillEveryDays != 90 {
		t.Errorf("OAuth row's drill schedule: %+v", o)
	}
	if h.Kind != inventory.KindHTTP || h.Controlled || !slices.Equal(h.Missing, []string{inventory.ColEnvironment, inventory.ColOwner, inventory.ColBackup}) {
		t.Fatalf("HTTP row with nobody answering for it: %+v", h)
	}
	if h.CreatedVia != inventory.CreatedManual || h.AccountRef != "billing key" || !slices.Equal(h.Scopes, []string{"billing.example.com/"}) || h.Drillable {
		t.Fatalf("HTTP row's columns: %+v", h)
	}

	inv := d.inv()
	edits := []struct{ id, field, value string }{
		{az, inventory.FieldBackupRevoker, "bob"},
		{az, inventory.FieldEnvironment, "production"},
		{cred, inventory.FieldEnvironment, "staging"},
		{cred, inventory.FieldOwner, "carol"},
		{cred, inventory.FieldBackupRevoker, "dave"},
		{cred, inventory.FieldReviewBy, "2030-01-31"},
	}
	for _, e := range edits {
		if err := inv.SetField(d.ctx(), e.id, e.field, e.value); err != nil {
			t.Fatalf("%s = %s: %v", e.field, e.value, err)
		}
	}
	if o = d.row(az); !o.Controlled || o.Environment != "production" || o.BackupRevoker != "bob" {
		t.Fatalf("OAuth row after its edits: %+v", o)
	}
	if v, _ := d.oauth().Authorization(az); v.Environment != "production" {
		t.Errorf("custody still names the environment %q", v.Environment)
	}
	if h = d.row(cred); !h.Controlled || h.Owner != "carol" || h.ReviewBy.Format(inventory.DateLayout) != "2030-01-31" {
		t.Fatalf("HTTP row after its edits: %+v", h)
	}
	var audited []string
	for _, e := range d.events() {
		if ev := e.Event; ev.Type == audit.EventInventoryEdited && ev.Inventory != nil {
			audited = append(audited, ev.AuthorizationID+" "+ev.Inventory.Field+"="+ev.Inventory.Value)
		}
	}
	for _, e := range edits {
		if !slices.Contains(audited, e.id+" "+e.field+"="+e.value) {
			t.Errorf("edit %s %s=%s is not in the audit log (%v)", e.id, e.field, e.value, audited)
		}
	}

	// Clearing a required column takes the row out of control again.
	if err := inv.SetField(d.ctx(), cred, inventory.FieldOwner, ""); err != nil {
		t.Fatal(err)
	}
	if h = d.row(cred); h.Controlled || !slices.Equal(h.Missing, []string{inventory.ColOwner}) {
		t.Fatalf("HTTP row without an owner again: %+v", h)
	}
	for _, bad := range []struct{ id, field, value string }{
		{cred, inventory.FieldEnvironment, "prod"},
		{cred, inventory.FieldReviewBy, "31/01/2030"},
		{cred, "scopes", "everything"},
		{cred, inventory.FieldOwner, "two\nlines"},
	} {
		if err := inv.SetField(d.ctx(), bad.id, bad.field, bad.value); !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("%s = %q: %v, want ErrInvalid", bad.field, bad.value, err)
		}
	}
	if err := inv.SetField(d.ctx(), "az-nope", inventory.FieldOwner, "x"); !errors.Is(err, inventory.ErrNotFound) {
		t.Errorf("an unknown row: %v", err)
	}
}

// TestFilters: by state and by text, alone and together.
func TestFilters(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: clientCanary})
	d := newDesk(t, deskOpts{})
	kept := connectCC(t, d, p, "tracker", "alice", "bob")
	revoked := connectCC(t, d, p, "old tracker", "alice", "bob")
	due := connectCC(t, d, p, "calendar", "erin", "frank")
	loose := addCredential(t, d, "billing key", "billing.example.com")
	if _, err := d.oauth().Revoke(d.ctx(), revoked); err != nil {
		t.Fatal(err)
	}
	if err := d.inv().SetField(d.ctx(), due, inventory.FieldReviewBy, "2001-01-01"); err != nil {
		t.Fatal(err)
	}
	ids := func(rows []inventory.Row) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	for _, c := range []struct {
		f    inventory.Filter
		want []string
	}{
		{inventory.Filter{}, sorted(kept, revoked, due, loose)},
		{inventory.Filter{State: inventory.FilterUncontrolled}, sorted(loose)},
		{inventory.Filter{State: inventory.FilterRevoked}, sorted(revoked)},
		{inventory.Filter{State: inventory.FilterReviewDue}, sorted(due)},
		{inventory.Filter{State: inventory.FilterNeedsReconnection}, nil},
		{inventory.Filter{State: inventory.FilterSuspended}, nil},
		{inventory.Filter{Text: "TRACKER"}, sorted(kept, revoked)},
		{inventory.Filter{Text: "tracker old"}, sorted(revoked)},
		{inventory.Filter{Text: "erin"}, sorted(due)},
		{inventory.Filter{Text: "billing.example.com"}, sorted(loose)},
		{inventory.Filter{Text: "alice", State: inventory.FilterRevoked}, sorted(revoked)},
		{inventory.Filter{Text: "nobody"}, nil},
		{inventory.Filter{State: "bogus"}, nil},
	} {
		if got := ids(d.rowsF(c.f)); !slices.Equal(got, c.want) {
			t.Errorf("filter %+v: %v, want %v", c.f, got, c.want)
		}
	}
	// A row whose drill is due is overdue until it is drilled.
	r := inventory.Row{Drillable: true, State: "active", DrillOverdue: true}
	if !r.Matches(inventory.Filter{State: inventory.FilterDrillOverdue}) || (&inventory.Row{}).Matches(inventory.Filter{State: inventory.FilterDrillOverdue}) {
		t.Error("the drill-overdue filter")
	}
}

// TestExportsHoldNoSecret: the CSV and JSON exports carry every row and
// column and neither the client secret, the HTTP secret nor a token; a
// cell that a spreadsheet would run as a formula is quoted.
func TestExportsHoldNoSecret(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: clientCanary})
	d := newDesk(t, deskOpts{})
	az := connectCC(t, d, p, "tracker", "alice", "bob")
	cred := addCredential(t, d, "=HYPERLINK(\"http://evil\")", "billing.example.com")
	inv := d.inv()

	raw, err := inv.Export(d.ctx(), inventory.Filter{}, inventory.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []inventory.Row `json:"rows"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Rows) != 2 {
		t.Fatalf("JSON export: %d rows, %v", len(doc.Rows), err)
	}
	c, err := inv.Export(d.ctx(), inventory.Filter{}, inventory.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(strings.NewReader(string(c))).ReadAll()
	if err != nil || len(records) != 3 {
		t.Fatalf("CSV export: %d records, %v", len(records), err)
	}
	header := records[0]
	for _, col := range []string{"provider", "account", "authorization id", "scopes", "environment", "held on", "owner", "backup revoker",
		"created via", "connected at", "last confirmed use", "last refresh", "review date", "last drill", "operations", "local disable procedure"} {
		if !slices.Contains(header, col) {
			t.Errorf("the CSV has no %q column", col)
		}
	}
	var body string
	for _, r := range records[1:] {
		body += strings.Join(r, ",") + "\n"
	}
	if !strings.Contains(body, az) || !strings.Contains(body, cred) || !strings.Contains(body, "'=HYPERLINK") {
		t.Errorf("CSV rows: %s", body)
	}
	// The access token the provider issued is the one active grant's: no
	// export may carry it, nor any secret.
	for name, out := range map[string][]byte{"json": raw, "csv": c} {
		for _, canary := range []string{clientCanary, httpCanary} {
			if strings.Contains(string(out), canary) {
				t.Errorf("the %s export carries a secret", name)
			}
		}
		if strings.Contains(strings.ToLower(string(out)), "bearer ") {
			t.Errorf("the %s export carries a bearer token", name)
		}
	}
	if _, err := inv.Export(d.ctx(), inventory.Filter{}, "xml"); !errors.Is(err, inventory.ErrInvalid) {
		t.Errorf("xml export: %v", err)
	}
}

// TestBlockUncontrolledAppliesToEveryRow: with the switch on, an agent's
// call that would use a row not under control is refused by the gateway
// before any approval, an HTTP credential's as an OAuth authorization's;
// once a person fills in the row, the call goes on to its approval.
func TestBlockUncontrolledAppliesToEveryRow(t *testing.T) {
	d := newDesk(t, deskOpts{})
	cred := addCredential(t, d, "billing key", "127.0.0.1:9")
	inv := d.inv()
	if err := inv.SetBlockUncontrolled(d.ctx(), true); err != nil {
		t.Fatal(err)
	}
	if !inv.Settings().BlockUncontrolled {
		t.Fatal("the switch did not stick")
	}
	a := d.agent()
	args := map[string]any{"method": "GET", "url": "http://127.0.0.1:9/x", "idempotency_key": "block-1"}
	r := a.call(agentapi.ToolHTTPRequest, args)
	if !r.IsError || !strings.HasPrefix(r.Text, agentapi.CodeDenied+":") || !strings.Contains(r.Text, "not under control") {
		t.Fatalf("a call with an uncontrolled credential: %+v", r)
	}
	if n := len(d.broker().Pending()); n != 0 {
		t.Fatalf("the refused call asked a person anyway (%d cards)", n)
	}
	found := false
	for _, e := range d.events() {
		if ev := e.Event; ev.Type == audit.EventActionDenied && ev.Reason == audit.ReasonUncontrolled && ev.Action != nil && ev.Action.CredentialRef == cred {
			found = true
		}
	}
	if !found {
		t.Error("the refusal is not in the audit log as uncontrolled")
	}
	for _, f := range []struct{ field, value string }{{inventory.FieldOwner, "carol"}, {inventory.FieldBackupRevoker, "dave"}, {inventory.FieldEnvironment, "development"}} {
		if err := inv.SetField(d.ctx(), cred, f.field, f.value); err != nil {
			t.Fatal(err)
		}
	}
	args["idempotency_key"] = "block-2"
	a.send(agentapi.ToolHTTPRequest, args)
	waitFor(t, "the session card of a controlled row's call", func() bool { return len(d.broker().Pending()) == 1 })
	if err := inv.SetBlockUncontrolled(d.ctx(), false); err != nil {
		t.Fatal(err)
	}
}
