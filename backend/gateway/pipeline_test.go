//go:build unix

package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
)

func TestApprovedCallReachesReceiverOnce(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	wait := a.callAsync(ToolHTTPRequest, w.req("ok-1a2b"))
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
	mustContain(t, a.call(ToolStatus, map[string]string{"idempotency_key": "key-ok-1a2b"}), "COMPLETED status=200")
	mustContain(t, a.call(ToolHTTPRequest, w.req("ok-1a2b")), "COMPLETED status=200")
	if n := w.recv.count(t, "ok-1a2b"); n != 1 {
		t.Fatalf("a reused key was sent again: %d", n)
	}
}

func TestToolListFollowsVault(t *testing.T) {
	w := newWorld(t, worldOpts{})
	a := startAgent(t, w.runDir)
	a.connect()
	if r := a.do(agentCmd{Op: "list"}); strings.Join(r.Tools, ",") != "http.request,yett.status" {
		t.Fatalf("unlocked tools %v", r.Tools)
	}
	w.lock()
	if r := a.do(agentCmd{Op: "list"}); strings.Join(r.Tools, ",") != "yett.status" {
		t.Fatalf("locked tools %v", r.Tools)
	}
	w.unlock()
	r := a.do(agentCmd{Op: "list"})
	for i := 0; i < 100 && r.Changes < 2; i++ { // notifications may trail the list reply
		time.Sleep(20 * time.Millisecond)
		r = a.do(agentCmd{Op: "list"})
	}
	if strings.Join(r.Tools, ",") != "http.request,yett.status" || r.Changes < 2 {
		t.Fatalf("tools %v after unlock, %d list_changed", r.Tools, r.Changes)
	}
}
