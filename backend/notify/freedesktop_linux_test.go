//go:build linux

package notify

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/yettdev/yett/internal/testsupport/desktoptest"
)

// heard collects what a Notifier hands back.
type heard struct {
	mu        sync.Mutex
	responses []Response
	rejected  []Rejected
	changed   int
	signal    chan struct{}
}

func newHeard() *heard { return &heard{signal: make(chan struct{}, 64)} }

func (h *heard) handlers() Handlers {
	return Handlers{
		Respond: func(r Response) {
			h.mu.Lock()
			h.responses = append(h.responses, r)
			h.mu.Unlock()
			h.signal <- struct{}{}
		},
		Reject: func(r Rejected) {
			h.mu.Lock()
			h.rejected = append(h.rejected, r)
			h.mu.Unlock()
			h.signal <- struct{}{}
		},
		ServerChanged: func() {
			h.mu.Lock()
			h.changed++
			h.mu.Unlock()
			h.signal <- struct{}{}
		},
	}
}

// wait waits for one more thing heard.
func (h *heard) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-h.signal:
	case <-time.After(10 * time.Second):
		t.Fatalf("never heard %s", what)
	}
}

// quiet checks that nothing more is heard for a moment: a signal that
// changes nothing is not handed on.
func (h *heard) quiet(t *testing.T, what string) {
	t.Helper()
	select {
	case <-h.signal:
		t.Fatalf("heard something after %s: %+v %+v", what, h.responses, h.rejected)
	case <-time.After(300 * time.Millisecond):
	}
}

func openOn(t *testing.T, addr string, h *heard) Notifier {
	t.Helper()
	n, err := Open(h.handlers(), Options{BusAddress: addr, Icon: "yett"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func card(id string, answerable bool) Notification {
	return Notification{Card: id, Title: "New agent: node wants api.example.com", Body: "node (pid 42), unsigned", Answerable: answerable,
		Expires: time.Now().Add(2 * time.Minute)}
}

// What Yett sends the server: both actions with the card's nonce, the
// body click, the category, the icon, normal urgency, a timeout no later
// than the card's, and a replacement that keeps the id.
func TestNotifySendsTheCard(t *testing.T) {
	addr := desktoptest.SessionBus(t)
	srv := startFakeServer(t, addr, true)
	n := openOn(t, addr, newHeard())
	if st := n.Status(); !st.Available || !st.Actions || st.Server != "fake 1.0" || st.Problem != "" {
		t.Fatalf("status %+v", st)
	}
	if err := n.Show(card("rq-1", true)); err != nil {
		t.Fatal(err)
	}
	id, got := srv.only()
	nonce := nonceOf(t, got)
	want := []string{"default", "Open Yett", "approve-" + nonce, "Approve", "deny-" + nonce, "Deny"}
	if !slices.Equal(got.Actions, want) || len(nonce) != 24 {
		t.Errorf("actions %q, want %q", got.Actions, want)
	}
	if got.AppName != "Yett" || got.Icon != "yett" || got.Replaces != 0 {
		t.Errorf("notification %+v", got)
	}
	if got.Hints["category"].Value() != "x-yett.approval" || got.Hints["urgency"].Value() != byte(1) {
		t.Errorf("hints %v", got.Hints)
	}
	if got.Timeout <= 0 || got.Timeout > 120_000 {
		t.Errorf("timeout %d ms", got.Timeout)
	}
	// Shown again (the policy changed): the same id is replaced, and the
	// answer it no longer offers is gone with its nonce kept.
	if err := n.Show(card("rq-1", false)); err != nil {
		t.Fatal(err)
	}
	id2, again := srv.only()
	if id2 != id || again.Replaces != id || !slices.Equal(again.Actions, []string{"default", "Open Yett"}) {
		t.Errorf("replacement: id %d (was %d) %+v", id2, id, again)
	}
	if err := n.Withdraw("rq-1"); err != nil {
		t.Fatal(err)
	}
	if srv.count() != 0 {
		t.Fatal("withdrawn notification still shown")
	}
}

// The server's answer is believed only from the owner of the service, for
// the id it returned for that card, with that card's nonce. Anything else
// that claims to answer is rejected (and so audited by the relay); a
// signal about another application's notification changes nothing.
func TestOnlyTheServerAnswers(t *testing.T) {
	addr := desktoptest.SessionBus(t)
	srv := startFakeServer(t, addr, true)
	h := newHeard()
	n := openOn(t, addr, h)
	n.Show(card("rq-a", true))
	idA, a := srv.only()
	n.Show(card("rq-b", true))
	var idB uint32
	var b fakeNote
	srv.mu.Lock()
	for id, note := range srv.shown {
		if id != idA {
			idB, b = id, note
		}
	}
	srv.mu.Unlock()
	forger, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()

	// A forged signal with the right id and the right key, from another
	// connection.
	emitFrom(t, forger, idA, "approve-"+nonceOf(t, a))
	h.wait(t, "the forged signal")
	// The owner, with another card's nonce on this card's id.
	srv.emitAction(idA, "approve-"+nonceOf(t, b))
	h.wait(t, "a key of another card")
	// The owner, with a key Yett never offered.
	srv.emitAction(idA, "approve")
	h.wait(t, "a key without nonce")
	h.mu.Lock()
	if len(h.responses) != 0 || len(h.rejected) != 3 {
		t.Fatalf("responses %+v rejected %+v", h.responses, h.rejected)
	}
	if r := h.rejected[0]; r.Card != "rq-a" || r.Sender != forger.Names()[0] || r.NotificationID != idA || !strings.Contains(r.Why, "does not own") {
		t.Errorf("forged: %+v", r)
	}
	h.mu.Unlock()
	// Another application's notification: ignored, not audited.
	srv.emitAction(9999, "default")
	h.quiet(t, "another application's notification")

	// The genuine answer.
	srv.emitAction(idB, "deny-"+nonceOf(t, b))
	h.wait(t, "the genuine deny")
	srv.emitAction(idA, "default")
	h.wait(t, "the body click")
	h.mu.Lock()
	defer h.mu.Unlock()
	// Each names the server that reported it: its unique name and its
	// process (this test's own: the fake server's connection is ours).
	server := Server{Name: srv.conn.Names()[0], Product: "fake 1.0"}
	want := []Response{{Card: "rq-b", Action: ActionDeny, Server: server}, {Card: "rq-a", Action: ActionOpen, Server: server}}
	if !slices.EqualFunc(h.responses, want, sameResponse) {
		t.Fatalf("responses %+v, want %+v", h.responses, want)
	}
	for _, r := range h.responses {
		if exe, _ := os.Executable(); r.Server.Process.PID != os.Getpid() || r.Server.Process.ExePath != exe || r.Server.Process.ExeSHA256 == ([32]byte{}) {
			t.Fatalf("the response names the process %+v, want this test's (pid %d, %s)", r.Server.Process, os.Getpid(), exe)
		}
	}
}

// A click that raced the withdrawal is handed on (the relay tells the
// person the card is gone); a server that comes and goes is followed.
func TestWithdrawnAndServerChanges(t *testing.T) {
	addr := desktoptest.SessionBus(t)
	h := newHeard()
	n := openOn(t, addr, h)
	if st := n.Status(); st.Available || st.Problem == "" {
		t.Fatalf("status without a server: %+v", st)
	}
	if err := n.Show(card("rq-1", true)); err == nil {
		t.Fatal("shown without a server")
	}
	srv := startFakeServer(t, addr, true)
	h.wait(t, "the server arriving")
	if err := n.Show(card("rq-1", true)); err != nil {
		t.Fatal(err)
	}
	id, note := srv.only()
	n.Withdraw("rq-1")
	srv.emitAction(id, "approve-"+nonceOf(t, note))
	h.wait(t, "the late click")
	h.mu.Lock()
	if len(h.responses) != 1 || !sameResponse(h.responses[0], Response{Card: "rq-1", Action: ActionApprove, Server: Server{Name: srv.conn.Names()[0], Product: "fake 1.0"}}) {
		t.Fatalf("late click: %+v", h.responses)
	}
	h.mu.Unlock()
	srv.conn.Close()
	h.wait(t, "the server leaving")
	if st := n.Status(); st.Available {
		t.Fatalf("status after the server left: %+v", st)
	}
}

// A server without actions gets a plain notification, and the status says
// the buttons are missing.
func TestServerWithoutActions(t *testing.T) {
	addr := desktoptest.SessionBus(t)
	srv := startFakeServer(t, addr, false)
	n := openOn(t, addr, newHeard())
	st := n.Status()
	if !st.Available || st.Actions || !strings.Contains(st.Problem, "buttons") {
		t.Fatalf("status %+v", st)
	}
	if err := n.Show(card("rq-1", true)); err != nil {
		t.Fatal(err)
	}
	if _, note := srv.only(); len(note.Actions) != 0 {
		t.Fatalf("actions %q", note.Actions)
	}
}

// A process name chosen by whoever started the process cannot become
// markup: a link, or text that hides the rest.
func TestMarkupIsNeutralised(t *testing.T) {
	addr := desktoptest.SessionBus(t)
	for _, markup := range []bool{false, true} {
		srv := startFakeServerWith(t, addr, true, markup)
		n := openOn(t, addr, newHeard())
		n.Show(Notification{Card: "rq", Title: `<a href="https://evil.example">Approve</a>`, Body: `<a href="x">y</a> & <b>`, Answerable: true})
		_, note := srv.only()
		if strings.ContainsAny(note.Summary, "<>") || strings.Contains(note.Body, "<") {
			t.Errorf("markup %v: summary %q body %q", markup, note.Summary, note.Body)
		}
		if markup && !strings.Contains(note.Body, "&lt;a href") {
			t.Errorf("body not escaped for a markup server: %q", note.Body)
		}
		n.Close()
		srv.conn.Close()
	}
}

// sameResponse compares what a response says, and who reported it by bus
// name and product (the process is checked apart).
func sameResponse(a, b Response) bool {
	return a.Card == b.Card && a.Action == b.Action && a.Server.Name == b.Server.Name && a.Server.Product == b.Server.Product
}
