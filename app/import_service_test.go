//go:build unix

package app

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Canaries of an import: values that must reach the vault and nothing else.
const (
	importCanaryA = "CANARY-import-app-a7c1"
	importCanaryB = "CANARY-import-app-b8d2"
	importCanaryC = "CANARY-import-app-c9e3"
)

type importFixture struct {
	*mcpFixture
	vs    *VaultService
	audit *AuditService
	file  string
}

// newImportFixture: a real vault, the keeper writing the audit log, the
// owner inventory, and the vault service whose file dialog answers file.
func newImportFixture(t *testing.T) *importFixture {
	t.Helper()
	f := &importFixture{mcpFixture: newMCPFixture(t)}
	sink := &eventSink{}
	sink.attach(f.rec.emit)
	logger := slog.New(slog.NewTextHandler(f.logs, nil))
	f.vs = newVaultService(f.v, sink, logger, false)
	f.vs.inventory = f.svc.inventory
	f.vs.setDialogs(fileDialogs{openImport: func(string) (string, error) { return f.file, nil }})
	f.audit = newAuditService(f.v, f.k, sink, logger, 5*time.Millisecond)
	t.Cleanup(func() { f.audit.close(); f.vs.close() })
	return f
}

// The whole import from a real .env file through the bound service: the
// file is left as it was (bytes and modification time), the preview names
// the lines and holds no value, the chosen lines become credentials with
// their hosts, injection, approval and who answers for them (under control
// in the inventory), the id is used up, and no canary reaches a view, an
// event, the app's log, the audit log or any file of the data directory.
func TestImportFromAFile(t *testing.T) {
	f := newImportFixture(t)
	f.file = filepath.Join(t.TempDir(), "import.env")
	content := []byte("# the staging services\r\nexport JIRA_URL=https://acme.atlassian.net\r\nJIRA_TOKEN=\"" + importCanaryA +
		"\"\r\nAPI_PASSWORD='" + importCanaryB + "' # basic auth\r\nUNUSED=" + importCanaryC + "\r\nBROKEN LINE\r\n")
	if err := os.WriteFile(f.file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(f.file, old, old); err != nil {
		t.Fatal(err)
	}

	p, err := f.vs.OpenImportFile()
	if err != nil {
		t.Fatal(err)
	}
	if !p.Chosen || p.ID == "" || p.Format != "env" || p.Source != "import.env" || p.Importable != 4 || len(p.Entries) != 5 {
		t.Fatalf("preview: %+v", p)
	}
	byName := map[string]ImportEntry{}
	for _, e := range p.Entries {
		byName[e.Name] = e
	}
	if e := byName["JIRA_TOKEN"]; e.Host != "acme.atlassian.net" || e.Kind != "text" || e.Length != len(importCanaryA) || e.Line != 3 {
		t.Fatalf("JIRA_TOKEN: %+v", e)
	}
	if e := byName[""]; e.Problem != "The line is not KEY=value." || e.Line != 6 {
		t.Fatalf("the broken line: %+v", e)
	}

	res, err := f.vs.ImportCredentials(p.ID, []ImportChoice{
		{Index: byName["JIRA_TOKEN"].Index, Form: NewCredentialForm{Format: "bearer", Hosts: []string{"acme.atlassian.net"},
			Approval: "session", RotateEveryDays: 90, Owner: "ana", BackupRevoker: "ana", Environment: "staging"}},
		{Index: byName["API_PASSWORD"].Index, Form: NewCredentialForm{Name: "api basic", Format: "basic", Username: "ci",
			Hosts: []string{"api.example.com"}, PathPrefixes: []string{"/v2/"}, Approval: "per_call"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 2 || len(res.Failed) != 0 || res.Added[0].Name != "JIRA_TOKEN" || res.Added[1].Name != "api basic" {
		t.Fatalf("result: %+v", res)
	}
	list, err := f.vs.ListCredentials()
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	basic := list[slices.IndexFunc(list, func(c CredentialView) bool { return c.Name == "api basic" })]
	if basic.Format != "basic" || basic.Username != "ci" || basic.Approval != "per_call" || basic.PathPrefixes[0] != "/v2/" {
		t.Fatalf("the basic credential: %+v", basic)
	}
	if jira := list[slices.IndexFunc(list, func(c CredentialView) bool { return c.Name == "JIRA_TOKEN" })]; jira.RotateEveryDays != 90 {
		t.Fatalf("the rotation reminder was not kept: %+v", jira)
	}
	rows := f.svc.inventory.rowsByID(slog.New(slog.DiscardHandler), "test")
	if r := rows[res.Added[0].ID]; !r.Controlled || r.Environment != "staging" {
		t.Fatalf("the credential imported with who answers for it: %+v", r)
	}
	if _, err := f.vs.ImportCredentials(p.ID, []ImportChoice{{Index: byName["UNUSED"].Index, Form: NewCredentialForm{Format: "bearer",
		Hosts: []string{"x.example.com"}, Approval: "session"}}}); err == nil ||
		!strings.Contains(err.Error(), "This import has ended") {
		t.Fatalf("the id used again: %v", err)
	}

	after, err := os.ReadFile(f.file)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(f.file)
	if !bytes.Equal(after, content) || !fi.ModTime().Equal(old) {
		t.Fatalf("the file changed: same bytes %v, modified %v", bytes.Equal(after, content), fi.ModTime())
	}

	settledStatus(t, f.audit)
	act, err := f.audit.Activity(ActivityFilter{})
	if err != nil || !act.Readable {
		t.Fatalf("activity: %v %+v", err, act)
	}
	recorded := 0
	for _, it := range act.Items {
		if it.CredentialName == "JIRA_TOKEN" || it.CredentialName == "api basic" {
			recorded++
		}
	}
	if recorded != 2 {
		t.Fatalf("the audit log records %d of the 2 credentials added", recorded)
	}
	views, _ := json.Marshal([]any{p, res, list, act})
	f.assertNoCanary(t, string(views))
}

// assertNoCanary: no import canary in where, in the events and logs, or
// in the clear in any file of the data directory (the vault and the audit
// log are encrypted).
func (f *importFixture) assertNoCanary(t *testing.T, where string) {
	t.Helper()
	places := map[string]string{"views": where, "events": f.rec.all(), "log": f.logs.String()}
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		places[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(places) < 5 {
		t.Fatalf("the data directory holds %d files: is it the right one?", len(places)-3)
	}
	for name, text := range places {
		for _, c := range []string{importCanaryA, importCanaryB, importCanaryC} {
			if strings.Contains(text, c) {
				t.Fatalf("a secret imported is in %s", name)
			}
		}
	}
}

// Pasted text: a Bitwarden export read from the page, a name a stored
// credential has flagged and refused, an entry with a problem, an index
// out of range or chosen twice and a form that brings a secret of its own
// refused with why, and the rest imported.
func TestImportPastedText(t *testing.T) {
	f := newImportFixture(t)
	if _, err := f.vs.AddCredential(NewCredentialForm{Name: "GitHub", Secret: "x-existing", Format: "bearer",
		Hosts: []string{"api.github.com"}, Approval: "session"}); err != nil {
		t.Fatal(err)
	}
	export := `{"encrypted": false, "items": [
  {"type": 1, "name": "GitHub", "login": {"uris": [{"uri": "https://github.com/login"}], "username": "octo", "password": "` + importCanaryA + `"}},
  {"type": 1, "name": "Stripe", "fields": [{"name": "secret key", "value": "` + importCanaryB + `", "type": 1}],
   "login": {"uris": [{"uri": "dashboard.stripe.com"}], "password": null}},
  {"type": 1, "name": "Extra", "login": {"password": "` + importCanaryC + `"}}
]}`
	p, err := f.vs.ReadImportText(export)
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != "bitwarden-json" || p.Source != "" || len(p.Entries) != 4 || p.Importable != 3 {
		t.Fatalf("preview: %+v", p)
	}
	gh, noPass, field, extra := p.Entries[0], p.Entries[1], p.Entries[2], p.Entries[3]
	if !gh.Duplicate || gh.Username != "octo" || gh.Host != "github.com" || noPass.Problem != "The item has no password." ||
		field.SuggestedName != "Stripe secret key" || field.Host != "dashboard.stripe.com" {
		t.Fatalf("entries: %+v", p.Entries)
	}
	bearer := func(host string) NewCredentialForm {
		return NewCredentialForm{Format: "bearer", Hosts: []string{host}, Approval: "session"}
	}
	withSecret := bearer("api.stripe.com")
	withSecret.Secret = "x-from-the-page"
	res, err := f.vs.ImportCredentials(p.ID, []ImportChoice{
		{Index: gh.Index, Form: bearer("api.github.com")},
		{Index: noPass.Index, Form: bearer("api.stripe.com")},
		{Index: 7, Form: bearer("api.stripe.com")},
		{Index: extra.Index, Form: withSecret},
		{Index: field.Index, Form: NewCredentialForm{Format: "header", HeaderName: "Authorization", Template: "Bearer {secret}",
			Hosts: []string{"api.stripe.com"}, Approval: "writes"}},
		{Index: field.Index, Form: NewCredentialForm{Name: "twice", Format: "bearer", Hosts: []string{"api.stripe.com"}, Approval: "session"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 1 || res.Added[0].Name != "Stripe secret key" || len(res.Failed) != 5 {
		t.Fatalf("result: %+v", res)
	}
	reasons := []string{}
	for _, fl := range res.Failed {
		reasons = append(reasons, fl.Reason)
	}
	want := []string{"A credential named “GitHub” already exists: give this one another name.", "The item has no password.",
		"No such entry, or it was chosen twice.", "The form carries a secret of its own; an import takes the entry's.",
		"No such entry, or it was chosen twice."}
	if !slices.Equal(reasons, want) {
		t.Fatalf("reasons:\n%q\nwant\n%q", reasons, want)
	}
	views, _ := json.Marshal([]any{p, res})
	f.assertNoCanary(t, string(views))
}

// What was read is wiped when the vault locks, when the import is
// cancelled, or when the vault is locked before it is read; a file that
// cannot be imported says why without quoting it, and what is not a file
// is refused before it is opened.
func TestImportEnds(t *testing.T) {
	f := newImportFixture(t)
	p, err := f.vs.ReadImportText("A=" + importCanaryA)
	if err != nil {
		t.Fatal(err)
	}
	f.vs.CancelImport(p.ID)
	if _, err := f.vs.ImportCredentials(p.ID, []ImportChoice{{Index: 0}}); err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Fatalf("after cancel: %v", err)
	}
	if p, err = f.vs.ReadImportText("A=" + importCanaryA); err != nil {
		t.Fatal(err)
	}
	if f.vs.imports.Len() != 1 {
		t.Fatalf("%d readings held", f.vs.imports.Len())
	}
	if err := f.v.Lock("user"); err != nil {
		t.Fatal(err)
	}
	if f.vs.imports.Len() != 0 {
		t.Fatal("the lock left what was read")
	}
	if _, err := f.vs.ReadImportText("A=" + importCanaryA); err == nil || err.Error() != "Locked." {
		t.Fatalf("reading while locked: %v", err)
	}
	if _, err := f.vs.Unlock("correct horse battery staple"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"export.json", `{"encrypted": true, "passwordProtected": true, "data": "2.` + importCanaryB + `|x|y"}`,
			"Yett cannot import this: it is an encrypted Bitwarden export"},
		{"broken.csv", "Title,Url,Username,Password\nx,y,z,\"" + importCanaryB + "\"tail\n", "Yett cannot import this: a quoted field is not closed or a quote is misplaced, so it is not valid CSV (line 2)."},
		{"empty.env", "# nothing\n", "Yett cannot import this: there is nothing in it to import."},
	} {
		f.file = filepath.Join(dir, tc.name)
		if err := os.WriteFile(f.file, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := f.vs.OpenImportFile(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	f.file = filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(f.file, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.vs.OpenImportFile(); err == nil || err.Error() != "Yett cannot import this: it is not a file Yett can read." {
		t.Fatalf("a FIFO: %v", err)
	}
	f.file = ""
	if p, err := f.vs.OpenImportFile(); err != nil || p.Chosen {
		t.Fatalf("a cancelled dialog: %+v %v", p, err)
	}
	f.assertNoCanary(t, "")
}
