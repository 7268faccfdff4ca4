//go:build unix

package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
)

// TestOneFsyncPerApprovedCall: an approved http.request through the real
// shim makes exactly one fsync: the group commit of the journal's log that
// holds the call's dispatch record and a copy of its audit intent. The
// audit file is not fsynced on the path, and the outcome waits for the next
// commit (here, with the flush delay far longer than the test, the next
// call's). Counted by the stores themselves, call by call.
func TestOneFsyncPerApprovedCall(t *testing.T) {
	w := newWorld(t, worldOpts{resultDelay: time.Hour})
	defer autoApprove(w)()
	client := mcp.NewClient(&mcp.Implementation{Name: "onefsync", Version: "0"}, nil)
	s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: newShimCmd(w.runDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := func(i int) {
		t.Helper()
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: agentapi.ToolHTTPRequest, Arguments: map[string]any{
			"method": "POST", "url": "http://" + w.recv.addr + "/onefsync", "body": "x", "idempotency_key": fmt.Sprintf("one-%d", i),
		}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	call(-1) // the session's approval writes records of its own
	for i := range 10 {
		j0, a0 := w.gw.journal.Syncs(), w.audit.Syncs()
		call(i)
		if j, a := w.gw.journal.Syncs()-j0, w.audit.Syncs()-a0; j != 1 || a != 0 {
			t.Fatalf("call %d made %d fsyncs of the journal's log and %d of the audit file, want 1 and 0", i, j, a)
		}
	}
	// The audit log holds every call, and takes its records back when the
	// gateway stops: its own fsync then covers them.
	w.stop()
	if w.gw.journal.Syncs() == 0 || w.audit.Syncs() == 0 {
		t.Fatal("stopping made no fsync")
	}
}
