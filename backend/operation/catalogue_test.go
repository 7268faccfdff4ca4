package operation

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/yettdev/yett/backend/target"
)

// known is the authorizations that exist, as custody would say.
type known map[string]bool

func (k known) AuthorizationExists(id string) (bool, error) { return k[id], nil }

// APIHosts: every test authorization's API is at api.example.test.
func (k known) APIHosts(id string) ([]target.HostPattern, error) {
	return []target.HostPattern{"api.example.test"}, nil
}

// Issue 18, item 9: an operation sends its authorization's token, so it is
// saved only for a URL on one of that authorization's API hosts; before,
// an operation could send a GitHub token to any HTTPS host.
func TestOperationOnlyToTheAuthorizationsHosts(t *testing.T) {
	c := openCatalogue(t, t.TempDir())
	for _, u := range []string{"https://collector.example/x", "https://api.example.test.evil.example/x", "https://example.test/x",
		"https://[::1]/x"} {
		o := listOp("tracker.exfil", "az-1")
		o.URLTemplate = u
		if err := c.Save(o); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "API hosts") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if err := c.Save(listOp("tracker.list", "az-1")); err != nil {
		t.Fatalf("an operation on the API host: %v", err)
	}
}

func openCatalogue(t *testing.T, dir string) *Catalogue {
	t.Helper()
	c, err := Open(Config{DataDir: dir, Authorizations: known{"az-1": true, "az-2": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func listOp(name, authorization string) Operation {
	return Operation{
		Name: name, AuthorizationID: authorization, Method: "GET", URLTemplate: "https://api.example.test/items",
		Params:   []Param{{Name: "state", Type: "string", Allowed: []string{"open", "closed"}, Required: true}},
		Approval: ApprovalSession,
	}
}

// TestCatalogueSaveRemove: what is saved is listed, looked up and kept
// across a reopen; an invalid operation or one of an authorization that is
// not there is refused; subscribers hear of every change.
func TestCatalogueSaveRemove(t *testing.T) {
	dir := t.TempDir()
	c := openCatalogue(t, dir)
	var changes atomic.Int32
	cancel := c.Subscribe(func() { changes.Add(1) })
	defer cancel()

	for _, o := range []Operation{fuzzOp, listOp("tracker.list_items", "az-1"), listOp("wiki.list_pages", "az-2")} {
		if err := c.Save(o); err != nil {
			t.Fatalf("save %s: %v", o.Name, err)
		}
	}
	if err := c.Save(listOp("tracker.list_items", "az-gone")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an operation of an authorization that does not exist: %v", err)
	}
	bad := listOp("Tracker List", "az-1")
	if err := c.Save(bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an invalid operation: %v", err)
	}
	if err := c.Remove("wiki.list_pages"); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove("wiki.list_pages"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removing twice: %v", err)
	}
	if got := changes.Load(); got != 4 {
		t.Fatalf("%d change notices, want 4 (three saves and a removal)", got)
	}

	names := func(ops []Operation) []string {
		var out []string
		for _, o := range ops {
			out = append(out, o.Name)
		}
		return out
	}
	want := []string{"tracker.create_issue", "tracker.list_items"}
	if got := names(c.List()); !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	if got := c.NamesByAuthorization(); !reflect.DeepEqual(got, map[string][]string{"az-1": want}) {
		t.Fatalf("names by authorization: %q", got)
	}
	o, ok := c.Lookup("tracker.create_issue")
	if !ok || !reflect.DeepEqual(o, roundTrip(t, fuzzOp)) {
		t.Fatalf("lookup: %+v %v", o, ok)
	}
	if _, ok := c.Lookup("wiki.list_pages"); ok {
		t.Fatal("a removed operation is still found")
	}

	// Lookups are answered from memory: they work with the database closed.
	c.Close()
	if _, ok := c.Lookup("tracker.list_items"); !ok {
		t.Fatal("lookup needs the database")
	}
	again := openCatalogue(t, dir)
	if !reflect.DeepEqual(again.List(), c.List()) {
		t.Fatalf("after a reopen:\n got %+v\nwant %+v", again.List(), c.List())
	}
}

// roundTrip is o as the catalogue keeps it (its spec decoded again).
func roundTrip(t *testing.T, o Operation) Operation {
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out Operation
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCatalogueKeepsOperationsFromOAuthDB: a data directory from before the
// catalogue had its own file keeps its operations. The fixture is an
// oauth.db written by that code (commit 30b5529: an authorization connected
// with client credentials on the test provider, and two operations saved
// with oauth.Custody.SaveOperation). They are copied once, when
// operations.db is created: removing one afterwards is not undone by the
// old table, which is left as it was.
func TestCatalogueKeepsOperationsFromOAuthDB(t *testing.T) {
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("testdata", "oauth-before-catalogue.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, legacyFile), fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	const az = "az-f0fec63625fdb0441ef21766"
	c, err := Open(Config{DataDir: dir, Authorizations: known{az: true}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Operation{{
		Name: "tracker.create_issue", AuthorizationID: az, Description: "Create an issue in project A",
		Method: "POST", URLTemplate: "https://api.example.test/projects/{project}/issues",
		Params:     []Param{{Name: "project", Type: "string", Allowed: []string{"A"}, Required: true}},
		BodySchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","maxLength":200}},"required":["title"]}`),
		Approval:   ApprovalPerCall,
	}, {
		Name: "tracker.list_issues", AuthorizationID: az, Method: "GET",
		URLTemplate: "https://api.example.test/projects/{project}/issues",
		Params:      []Param{{Name: "project", Type: "string", Pattern: "[A-Z]{1,8}", Required: true}, {Name: "limit", Type: "integer"}},
		Approval:    ApprovalSession,
	}}
	if got := c.List(); !reflect.DeepEqual(got, want) {
		t.Fatalf("operations after the upgrade:\n got %+v\nwant %+v", got, want)
	}
	for _, o := range want {
		if err := o.Validate(); err != nil {
			t.Fatalf("%s no longer validates: %v", o.Name, err)
		}
	}
	if _, err := c.List()[0].Render(json.RawMessage(`{"project":"A","body":{"title":"x"}}`)); err != nil {
		t.Fatalf("an upgraded operation does not render: %v", err)
	}
	if err := c.Remove("tracker.list_issues"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = Open(Config{DataDir: dir, Authorizations: known{az: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.List(); len(got) != 1 || got[0].Name != "tracker.create_issue" {
		t.Fatalf("after a removal and a reopen: %+v", got)
	}
	after, err := os.ReadFile(filepath.Join(dir, legacyFile))
	if err != nil || string(after) != string(fixture) {
		t.Fatal("the old oauth.db was changed")
	}
}

// A data directory without oauth.db starts with an empty catalogue and gets
// no oauth.db from it.
func TestCatalogueWithoutOAuthDB(t *testing.T) {
	dir := t.TempDir()
	c := openCatalogue(t, dir)
	if got := c.List(); len(got) != 0 {
		t.Fatalf("a new catalogue lists %+v", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, legacyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening the catalogue made an oauth.db: %v", err)
	}
	if _, err := Open(Config{DataDir: dir}); !errors.Is(err, ErrConfig) {
		t.Fatalf("no Authorizations: %v", err)
	}
}

// TestCatalogueChangesSayWhat: SubscribeChanges hears which operation was
// saved (as stored) or removed, once per write, and nothing for a refused
// write.
func TestCatalogueChangesSayWhat(t *testing.T) {
	c := openCatalogue(t, t.TempDir())
	var got []Change
	cancel := c.SubscribeChanges(func(ch Change) { got = append(got, ch) })
	defer cancel()
	if err := c.Save(listOp("tracker.list_items", "az-1")); err != nil {
		t.Fatal(err)
	}
	c.Save(listOp("tracker.list_items", "az-gone"))
	if err := c.Remove("tracker.list_items"); err != nil {
		t.Fatal(err)
	}
	c.Remove("tracker.list_items")
	if len(got) != 2 || got[0].Saved == nil || got[0].Saved.Name != "tracker.list_items" || got[0].Saved.AuthorizationID != "az-1" ||
		got[0].Removed != "" || got[1].Saved != nil || got[1].Removed != "tracker.list_items" {
		t.Fatalf("changes: %+v", got)
	}
}

// Issue 20, item 5: adding an operation under a name in use was a silent
// replace, which rebound it to another account. Add refuses, in this
// catalogue and when another process (the CLI) added the name meanwhile;
// Save still replaces on purpose.
func TestAddNeverRebindsAnOperation(t *testing.T) {
	dir := t.TempDir()
	c := openCatalogue(t, dir)
	if err := c.Add(listOp("tracker.list", "az-1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(listOp("tracker.list", "az-2")); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("adding a name in use: %v", err)
	}
	if o, _ := c.Lookup("tracker.list"); o.AuthorizationID != "az-1" {
		t.Fatalf("the operation was rebound to %s", o.AuthorizationID)
	}
	other := openCatalogue(t, dir)
	if err := other.Add(listOp("tracker.search", "az-1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(listOp("tracker.search", "az-2")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("adding a name another process added: %v", err)
	}
	if err := c.Save(listOp("tracker.list", "az-2")); err != nil {
		t.Fatalf("an explicit replace: %v", err)
	}
	if o, _ := c.Lookup("tracker.list"); o.AuthorizationID != "az-2" {
		t.Fatalf("Save did not replace: %s", o.AuthorizationID)
	}
}

// An operation's tool name fits the 55 characters a client leaves beside
// "yett": a longer name is shortened the same way every time (its start
// and a digest of the whole), found again by LookupTool, and a second
// operation that would shorten to the same tool is refused.
func TestToolNamesAreShortenedPredictably(t *testing.T) {
	short := "tracker.list_issues"
	if ToolName(short) != short {
		t.Fatalf("a short name was changed: %q", ToolName(short))
	}
	long := "tracker.list_every_issue_of_every_project_in_the_org_now"
	tool := ToolName(long)
	if len(tool) != MaxToolName || !strings.HasPrefix(tool, long[:MaxToolName-9]+"_") || ToolName(long) != tool {
		t.Fatalf("ToolName(%q) = %q", long, tool)
	}
	dir := t.TempDir()
	c := openCatalogue(t, dir)
	o := listOp(long, "az-1")
	o.ReadOnly = true
	if err := c.Save(o); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.LookupTool(tool); !ok || got.Name != long || !got.ReadOnly {
		t.Fatalf("LookupTool(%q) = %+v, %v", tool, got, ok)
	}
	if _, ok := c.LookupTool(long); ok {
		t.Fatal("a long name is a tool of its own")
	}
	twin := listOp(long[:MaxToolName-9]+"_"+tool[MaxToolName-8:], "az-1")
	if err := c.Save(twin); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "same tool") {
		t.Fatalf("a name listed as the same tool: %v", err)
	}
	// The read-only mark and the tool index survive a reopen.
	c.Close()
	c = openCatalogue(t, dir)
	if got, ok := c.LookupTool(tool); !ok || !got.ReadOnly {
		t.Fatalf("after a reopen: %+v, %v", got, ok)
	}
	if err := c.Remove(long); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.LookupTool(tool); ok {
		t.Fatal("a removed operation's tool is still found")
	}
}
