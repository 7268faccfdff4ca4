//go:build unix

package gateway

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/target"
)

// answerOf decodes a result's structured content.
func answerOf(t *testing.T, r agentReply) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Structured, &m); err != nil || m == nil {
		t.Fatalf("no structured content in %q (%s): %v", r.Text, r.Structured, err)
	}
	return m
}

// auditEntry is the audit log's entry at index i.
func auditEntry(t *testing.T, w *world, i float64) audit.Event {
	t.Helper()
	for e, err := range audit.ReadEvents(filepath.Join(w.dataDir, AuditDir, audit.LogFile), w.identity) {
		if err != nil {
			t.Fatal(err)
		}
		if float64(e.Index) == i {
			return e.Event
		}
	}
	t.Fatalf("no audit entry %v", i)
	return audit.Event{}
}

// Every tool result carries structured content: the outcome code an agent
// branches on, the call's request id and key, and the audit entry that
// records the result or the refusal; a refusal is an isError result with
// the same fields. The text the agent read before is still there.
func TestStructuredResults(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("first")

	r := a.call(agentapi.ToolHTTPRequest, w.req("structured-1"))
	ans := answerOf(t, r)
	if r.IsError || ans["outcome"] != "COMPLETED" || ans["detail"] != "status=200" || ans["status"] != float64(200) ||
		ans["idempotency_key"] != "key-structured-1" || !strings.HasPrefix(ans["request_id"].(string), "q-") {
		t.Fatalf("completed call: %v", ans)
	}
	if !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("the text lost the answer: %q", r.Text)
	}
	e := auditEntry(t, w, ans["audit_entry"].(float64))
	if e.Type != audit.EventActionResult || e.Action == nil || e.Action.RequestID != ans["request_id"] {
		t.Fatalf("audit_entry %v is not this call's result: %+v", ans["audit_entry"], e)
	}

	// yett.status names the call by its request id, and its fate.
	st := answerOf(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-structured-1"}))
	if st["outcome"] != "COMPLETED" || st["request_id"] != ans["request_id"] || st["fate"] != "COMPLETED status=200" {
		t.Fatalf("yett.status: %v", st)
	}

	// The same key again: refused, naming the earlier call and the entry
	// that records this refusal.
	again := a.call(agentapi.ToolHTTPRequest, w.req("structured-1"))
	ag := answerOf(t, again)
	if !again.IsError || ag["outcome"] != "COMPLETED" || ag["request_id"] != ans["request_id"] || ag["message"] == "" {
		t.Fatalf("a reused key: %v", ag)
	}
	if e := auditEntry(t, w, ag["audit_entry"].(float64)); e.Type != audit.EventActionDenied || e.Reason != audit.ReasonKeyInUse {
		t.Fatalf("audit_entry of a reused key: %+v", e)
	}

	// Refused at the vault gate: LOCKED, with the entry of the refusal.
	w.lock()
	locked := a.call(agentapi.ToolHTTPRequest, w.req("structured-2"))
	lk := answerOf(t, locked)
	if !locked.IsError || lk["outcome"] != agentapi.CodeLocked || lk["idempotency_key"] != "key-structured-2" || lk["request_id"] != nil {
		t.Fatalf("locked: %v", lk)
	}
	if !strings.HasPrefix(locked.Text, agentapi.CodeLocked+": ") {
		t.Fatalf("the refusal's text changed: %q", locked.Text)
	}
	if e := auditEntry(t, w, lk["audit_entry"].(float64)); e.Type != audit.EventActionDenied || e.Reason != audit.ReasonVaultLocked {
		t.Fatalf("audit_entry of a locked refusal: %+v", e)
	}
	w.unlock()
}

// A code's detail rides in its own field: INVALID_REQUEST
// idempotency_key_reused, for a key named again with another request.
func TestStructuredRefusalDetail(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("first")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req("detail-1")), `"status":200`)
	other := w.req("detail-2")
	other["idempotency_key"] = "key-detail-1"
	r := a.call(agentapi.ToolHTTPRequest, other)
	ans := answerOf(t, r)
	if !r.IsError || ans["outcome"] != agentapi.CodeInvalid || ans["detail"] != agentapi.DetailKeyReused ||
		!strings.HasPrefix(ans["request_id"].(string), "q-") || ans["audit_entry"] == nil {
		t.Fatalf("a key reused with another request: %v", ans)
	}
	if !strings.HasPrefix(r.Text, agentapi.CodeInvalid+" "+agentapi.DetailKeyReused+": ") {
		t.Fatalf("text %q", r.Text)
	}
}

// Every tool declares an output schema, and what it returns validates
// against it (the official TypeScript SDK refuses a result that does not);
// and every tool says what it can do, in annotations a client plans with.
func TestToolsDeclareWhatTheyDo(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	var tools []mcp.Tool
	if err := json.Unmarshal(a.do(agentCmd{Op: "list"}).ToolDefs, &tools); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ read, destructive, openWorld bool }{
		agentapi.ToolStatus:      {true, false, false},
		agentapi.ToolHTTPGet:     {true, false, true},
		agentapi.ToolHTTPRequest: {false, true, true},
		agentapi.ToolSSHExec:     {false, true, true},
		// Asking changes nothing and reaches nothing outside Yett.
		agentapi.ToolRequestAccess: {false, false, false},
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		an := tool.Annotations
		if an == nil || tool.Title == "" || an.Title != tool.Title || tool.OutputSchema == nil {
			t.Fatalf("%s: title %q, annotations %+v, output schema %v", tool.Name, tool.Title, an, tool.OutputSchema)
		}
		destructive := an.DestructiveHint != nil && *an.DestructiveHint
		openWorld := an.OpenWorldHint == nil || *an.OpenWorldHint
		if an.ReadOnlyHint != w.read || destructive != w.destructive || openWorld != w.openWorld {
			t.Errorf("%s: read-only %v, destructive %v, open world %v; want %+v", tool.Name, an.ReadOnlyHint, destructive, openWorld, w)
		}
		if len("yett")+1+len(tool.Name) > 60 {
			t.Errorf("%s: server and tool name pass 60 characters", tool.Name)
		}
	}
	if strings.Join(names, ",") != "http.get,http.request,ssh.exec,yett.request_access,yett.status" {
		t.Fatalf("tools/list is not in a stable order: %v", names)
	}
}

// A read is GET or HEAD, as sent (upper case): a "writes" approval asks
// for every other method, lower-case spellings included.
func TestReadMethod(t *testing.T) {
	for _, m := range []string{"GET", "HEAD"} {
		if !readMethod(m) {
			t.Errorf("%s is not a read", m)
		}
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get", "head", ""} {
		if readMethod(m) {
			t.Errorf("%q is a read", m)
		}
	}
}

// http.get reads only: GET (the default) or HEAD, no body; anything else is
// refused before the journal, with the reason.
func TestParseHTTPGetArgs(t *testing.T) {
	for _, tt := range []struct{ args, method, err string }{
		{`{"url":"https://api.example.com/x"}`, "GET", ""},
		{`{"method":"head","url":"https://api.example.com/x"}`, "HEAD", ""},
		{`{"method":"POST","url":"https://api.example.com/x"}`, "", "GET or HEAD"},
		{`{"method":"DELETE","url":"https://api.example.com/x"}`, "", "GET or HEAD"},
		{`{"url":"https://api.example.com/x","body":"x"}`, "", "documented fields"},
		{`{"method":7,"url":"https://api.example.com/x"}`, "", "must be a string"},
	} {
		call, err := parseHTTPGetArgs(json.RawMessage(tt.args))
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want one saying %q", tt.args, err, tt.err)
		case tt.err == "" && (err != nil || call.req.Method != tt.method || call.req.Body != nil):
			t.Errorf("%s: %+v, %v", tt.args, call, err)
		}
	}
}

// http.get is the same pipeline as http.request: a session card for a new
// run, and a per-call card every time for a credential set so; the
// read-only hint changes nothing in Yett's approvals.
func TestHTTPGetAsksLikeHTTPRequest(t *testing.T) {
	w := newWorld(t, worldOpts{perCall: true})
	a := startAgent(t, w.runDir)
	a.connect()
	get := map[string]any{"url": "http://" + w.recv.addr + "/replay-test/read-1", "idempotency_key": "key-read-1"}
	wait := a.callAsync(agentapi.ToolHTTPGet, get)
	w.approveNext()
	card := w.pending(approval.KindCall)
	if card.Method != "GET" {
		t.Fatalf("the per-call card says %q", card.Method)
	}
	if err := w.gw.Broker().Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if ans := answerOf(t, r); r.IsError || ans["outcome"] != "COMPLETED" || ans["status"] != float64(200) {
		t.Fatalf("http.get: %v", ans)
	}
	if n := w.recv.count(t, "read-1"); n != 1 {
		t.Fatalf("the receiver saw the read %d times", n)
	}
	// Denied on its card: nothing is sent.
	wait = a.callAsync(agentapi.ToolHTTPGet, map[string]any{"url": "http://" + w.recv.addr + "/replay-test/read-2"})
	card = w.pending(approval.KindCall)
	if err := w.gw.Broker().Answer(card.ID, false, "test"); err != nil {
		t.Fatal(err)
	}
	if ans := answerOf(t, wait()); ans["outcome"] != agentapi.CodeDenied {
		t.Fatalf("a denied read: %v", ans)
	}
	if n := w.recv.count(t, "read-2"); n != 0 {
		t.Fatal("a denied read was sent")
	}
}

type fakeAuthorizations struct{}

func (fakeAuthorizations) AuthorizationExists(string) (bool, error) { return true, nil }
func (fakeAuthorizations) APIHosts(string) ([]target.HostPattern, error) {
	return []target.HostPattern{"api.example.test"}, nil
}

// A named operation is listed under its (shortened) tool name, with the
// read-only hint when the person marked it so and the destructive hint
// otherwise, and the output schema of an HTTP answer.
func TestOperationToolsSayWhatTheyDo(t *testing.T) {
	ops, err := operation.Open(operation.Config{DataDir: t.TempDir(), Authorizations: fakeAuthorizations{}})
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	long := "tracker.list_every_issue_of_every_project_in_the_org_now"
	for _, o := range []operation.Operation{
		{Name: long, AuthorizationID: "az", Method: "GET", URLTemplate: "https://api.example.test/issues", Approval: operation.ApprovalSession, ReadOnly: true},
		{Name: "tracker.delete_issue", AuthorizationID: "az", Method: "DELETE", URLTemplate: "https://api.example.test/issues/{id}",
			Params: []operation.Param{{Name: "id", Type: "string", Pattern: "[0-9]+", Required: true}}, Approval: operation.ApprovalSession, Description: "Delete an issue"},
	} {
		if err := ops.Save(o); err != nil {
			t.Fatal(err)
		}
	}
	g := &Gateway{ops: ops}
	tools := g.operationTools()
	if len(tools) != 2 {
		t.Fatalf("%d tools", len(tools))
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
		if tool.OutputSchema == nil || tool.Annotations == nil || len(tool.Name)+len("yett")+1 > 60 {
			t.Errorf("%s: %+v", tool.Name, tool)
		}
	}
	read := byName[operation.ToolName(long)]
	if read == nil || !read.Annotations.ReadOnlyHint || read.Annotations.DestructiveHint != nil {
		t.Fatalf("the read-only operation: %+v", read)
	}
	del := byName["tracker.delete_issue"]
	if del == nil || del.Annotations.ReadOnlyHint || del.Annotations.DestructiveHint == nil || !*del.Annotations.DestructiveHint || del.Title != "Delete an issue" {
		t.Fatalf("the delete operation: %+v", del)
	}
}
