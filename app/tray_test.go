package app

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/vault"
)

func waitingCards(n int) []ApprovalCard {
	var out []ApprovalCard
	for i := range n {
		out = append(out, ApprovalCard{ID: fmt.Sprintf("rq-%d", i), Kind: "session", Agent: AgentView{Executable: "claude"}, Target: "api.example.com"})
	}
	return out
}

func TestTrayMenu(t *testing.T) {
	cases := []struct {
		name         string
		cards        int
		vault        vault.State
		header, lock string
		cardSlots    int
		more         string
	}{
		{"nothing waiting", 0, vault.StateUnlocked, "No approval waiting", "Lock the vault now", 0, ""},
		{"one card, locked", 1, vault.StateLocked, "1 approval waiting", "Vault locked", 1, ""},
		{"no vault yet", 0, vault.StateUninitialised, "No approval waiting", "", 0, ""},
		{"a damaged vault", 0, vault.StateDamaged, "No approval waiting", "", 0, ""},
		{"as many cards as slots", trayCardSlots, vault.StateUnlocked, "5 approvals waiting", "Lock the vault now", trayCardSlots, ""},
		{"more cards than slots", 7, vault.StateUnlocked, "7 approvals waiting", "Lock the vault now", trayCardSlots, "2 more in the window…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := buildTrayMenu(waitingCards(c.cards), c.vault)
			if h := m.Items[trayHeader]; h.Label != c.header || h.Enabled || !h.Visible {
				t.Errorf("header %+v, want %q shown and not clickable", h, c.header)
			}
			if !strings.Contains(m.Tooltip, strings.ToLower(c.header)) {
				t.Errorf("tooltip %q does not say %q", m.Tooltip, c.header)
			}
			for i := range trayCardSlots {
				it := m.Items[trayFirstCard+i]
				if want := i < c.cardSlots; it.Visible != want || it.Enabled != want {
					t.Errorf("card slot %d: %+v, shown %v", i, it, want)
				}
				if i < c.cardSlots && (it.card != fmt.Sprintf("rq-%d", i) || it.Label != "claude: asks to use api.example.com") {
					t.Errorf("card slot %d: %+v", i, it)
				}
			}
			if more := m.Items[trayMore]; more.Label != c.more || more.Visible != (c.more != "") {
				t.Errorf("more: %+v, want %q", more, c.more)
			}
			l := m.Items[trayLock]
			if l.Label != c.lock || l.Visible != (c.lock != "") || l.Enabled != (c.vault == vault.StateUnlocked) {
				t.Errorf("lock item %+v with the vault %s", l, c.vault)
			}
			for _, slot := range []int{trayOpen, trayQuit} {
				if it := m.Items[slot]; !it.Visible || !it.Enabled || !it.SeparatorBefore {
					t.Errorf("slot %d: %+v", slot, it)
				}
			}
		})
	}
}

// recordedActions is what the tray asked for.
type recordedActions struct{ done []string }

func (r *recordedActions) raise(card string) { r.done = append(r.done, "raise "+card) }
func (r *recordedActions) lockVault()        { r.done = append(r.done, "lock") }
func (r *recordedActions) quit()             { r.done = append(r.done, "quit") }

// A click does what the slot shows now, and nothing on a slot that is
// hidden or disabled, or that does not exist: a click from the session bus
// can name any item id.
func TestTrayClicks(t *testing.T) {
	rec := &recordedActions{}
	tr := &tray{do: rec, log: slog.New(slog.DiscardHandler), vault: vault.StateUnlocked}
	tr.setCards(waitingCards(2))
	want := map[int]string{
		trayFirstCard: "raise rq-0", trayFirstCard + 1: "raise rq-1", trayOpen: "raise ", trayLock: "lock", trayQuit: "quit",
	}
	for slot := -1; slot <= traySlots; slot++ {
		rec.done = nil
		tr.click(slot)
		got := strings.Join(rec.done, ",")
		if got != want[slot] {
			t.Errorf("click on slot %d did %q, want %q", slot, got, want[slot])
		}
	}
	// Locked, Lock is disabled: its click does nothing.
	tr.setVault(vault.StateLocked)
	rec.done = nil
	tr.click(trayLock)
	if len(rec.done) != 0 {
		t.Errorf("a click on the disabled Lock did %v", rec.done)
	}
	// The card answered (gone), its slot is hidden: a late click on it
	// shows nothing.
	tr.setCards(waitingCards(1))
	rec.done = nil
	tr.click(trayFirstCard + 1)
	if len(rec.done) != 0 {
		t.Errorf("a click on a hidden card slot did %v", rec.done)
	}
}

func TestTrayCardLabel(t *testing.T) {
	agent := AgentView{Executable: "claude"}
	cases := []struct {
		card ApprovalCard
		want string
	}{
		{ApprovalCard{Kind: "session", Agent: agent, Target: "api.github.com"}, "claude: asks to use api.github.com"},
		{ApprovalCard{Kind: "call", Agent: agent, Method: "POST", Target: "api.github.com"}, "claude: POST api.github.com"},
		{ApprovalCard{Kind: "call", Agent: agent, Command: "ls", Credential: "web-1"}, "claude: runs a command on web-1"},
		{ApprovalCard{Kind: "call", Agent: agent, Tool: "github.create_issue"}, "claude: calls github.create_issue"},
		{ApprovalCard{Kind: "access", Agent: agent, Wants: "a credential for api.github.com"}, "claude: asks for a credential for api.github.com"},
		{ApprovalCard{Kind: "session", Agent: AgentView{Name: "node"}, Target: "x.example"}, "node: asks to use x.example"},
		{ApprovalCard{Kind: "session", Agent: AgentView{Executable: "Approve\u202e\nall_" + strings.Repeat("x", 40)}, Target: "a.example"},
			"Approve\\u202e\\u000aall_xxxxxxxxx…: asks to use a.example"},
	}
	for _, c := range cases {
		if got := trayCardLabel(c.card); got != c.want {
			t.Errorf("trayCardLabel(%+v) = %q, want %q", c.card, got, c.want)
		}
	}
}

func TestTraySafe(t *testing.T) {
	cases := []struct{ in, want string }{
		{"claude", "claude"},
		{"a\nb", "a\\u000ab"},
		{"evil\u202egpj.exe", "evil\\u202egpj.exe"},
		{"zero\u200bwidth", "zero\\u200bwidth"},
		{"bad\xffutf8", "bad\\ufffdutf8"},
		{"under_score & amp", "under_score & amp"},
		{strings.Repeat("é", 40), strings.Repeat("é", 32) + "…"},
		{"exactly-32-runes-long-xxxxxxxxxx", "exactly-32-runes-long-xxxxxxxxxx"},
		{strings.Repeat("x", 30) + "\u202e", strings.Repeat("x", 30) + "…"},
	}
	for _, c := range cases {
		if got := traySafe(c.in, 32); got != c.want {
			t.Errorf("traySafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// What the agent names its program must come out as one short line of
// visible text.
func FuzzTraySafe(f *testing.F) {
	for _, s := range []string{"claude", "a\nb\u202ec", "\xff\xfe", strings.Repeat("ü", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := traySafe(s, trayPartRunes)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > trayPartRunes+1 {
			t.Fatalf("traySafe(%q) = %q", s, got)
		}
		for _, r := range got {
			if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("traySafe(%q) = %q keeps %U", s, got, r)
			}
		}
		if label := trayCardLabel(ApprovalCard{Kind: "call", Agent: AgentView{Executable: s}, Method: s, Target: s}); utf8.RuneCountInString(label) > trayLabelRunes+1 {
			t.Fatalf("label %q is too long", label)
		}
	})
}
