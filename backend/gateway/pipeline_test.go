//go:build unix

package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
)

func TestApprovedCallReachesReceiverOnce(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req("ok-1a2b"))
	card := w.approveNext()
	if card.Change != approval.ChangeFirst || card.Who.PID == 0 || card.Who.Signer == "" || card.Target != w.recv.addr {
		t.Fatalf("card %+v", card)
	}
	r := wait()
	mustContain(t, r, `"status":200`)
	if r.IsError {
		t.Fatalf("%+v", r)
	}
	if n := w.recv.count(t, "ok-1a2b"); n != 1 {
		t.Fatalf("receiver has %d arrivals", n)
	}
	lines := w.recv.lines(t)
	if lines[0]["auth_marker"] == "" || lines[0]["idempotency_key"] != "key-ok-1a2b" {
		t.Fatalf("arrival %+v", lines[0])
	}
	// Completed: yett.status says so; the same key is never sent again.
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "key-ok-1a2b"}), "COMPLETED status=200")
	mustContain(t, a.call(agentapi.ToolHTTPRequest, w.req("ok-1a2b")), "COMPLETED status=200")
	if n := w.recv.count(t, "ok-1a2b"); n != 1 {
		t.Fatalf("a reused key was sent again: %d", n)
	}
}

func TestToolListFollowsVault(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	r := a.do(agentCmd{Op: "list"})
	if strings.Join(r.Tools, ",") != "http.get,http.request,ssh.exec,yett.request_access,yett.status" {
		t.Fatalf("unlocked tools %v", r.Tools)
	}
	// The SDK debounces tools/list_changed, so a lock and an unlock in quick
	// succession may reach the agent as one notification. What the agent
	// needs is to hear that the list changed after each change, and then to
	// read the right list: wait for each notification before the next change.
	listAfterChange := func(seen int, want string) agentReply {
		t.Helper()
		deadline := time.Now().Add(testWait)
		for {
			r := a.do(agentCmd{Op: "list"})
			if r.Changes > seen && strings.Join(r.Tools, ",") == want {
				return r
			}
			if time.Now().After(deadline) {
				t.Fatalf("tools %v after %d list_changed (had %d), want %s", r.Tools, r.Changes, seen, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	w.lock()
	r = listAfterChange(r.Changes, "yett.status")
	w.unlock()
	listAfterChange(r.Changes, "http.get,http.request,ssh.exec,yett.request_access,yett.status")
}
