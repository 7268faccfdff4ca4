package app

import (
	"context"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// The newest call with a result is found behind newer calls that have none
// (denied, still waiting, sent without an outcome), more than a page of
// them, and it is named by the run its session approved.
func TestLastAgentCallSkipsCallsWithoutAResult(t *testing.T) {
	f := newAuditFixture(t, "")
	if err := f.vault.Create(vault.Passphrase("correct horse battery"), false); err != nil {
		t.Fatal(err)
	}
	w := f.svc.keeper.AuditLog()
	add := func(ev audit.Event) {
		t.Helper()
		ev.Time = time.Now().UTC()
		if _, err := w.Append(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	run := &audit.RunBinding{RunID: "run-1", PID: 4242, Executable: "/usr/local/bin/claude", Signer: "unsigned"}
	add(audit.Event{Type: audit.EventSessionApproved, SessionID: "S1", Run: run, ApprovedBy: "ana", Surface: "app"})
	done := &audit.Action{RequestID: "q-done", Channel: "http", Operation: "GET", Target: "api.example.com", Path: "/user", CredentialRef: "cred-gone"}
	add(audit.Event{Type: audit.EventActionRequested, SessionID: "S1", Action: done})
	add(audit.Event{Type: audit.EventActionDispatched, SessionID: "S1", Action: done})
	add(audit.Event{Type: audit.EventActionResult, SessionID: "S1", Action: done,
		Result: &audit.Result{Class: audit.ResultClientError, Status: 404, Bytes: 9, DurationMS: 3}})

	// Newer calls without a result: more than one page of them.
	appendCalls(t, f.svc, 0, activity.MaxPageSize+1)
	sent := &audit.Action{RequestID: "q-sent", Channel: "http", Operation: "POST", Target: "api.example.com", Path: "/later"}
	add(audit.Event{Type: audit.EventActionRequested, SessionID: "S1", Action: sent})
	add(audit.Event{Type: audit.EventActionDispatched, SessionID: "S1", Action: sent})
	add(audit.Event{Type: audit.EventActionDenied, SessionID: "S1", Reason: audit.ReasonVaultLocked,
		Action: &audit.Action{RequestID: "q-denied", Channel: "http", Operation: "GET", Target: "api.example.com"}})

	got := f.svc.LastAgentCall()
	want := AgentCall{Readable: true, Found: true, Time: got.Time, Channel: "http", Operation: "GET", Target: "api.example.com",
		Path: "/user", Status: 404, Class: "client_error", Agent: "claude", PID: 4242}
	if got != want {
		t.Fatalf("last call\n got %+v\nwant %+v", got, want)
	}
}
