package approval

import (
	"context"
	"strings"
	"testing"
	"time"
)

// An SSH command's cards name the command exactly and show its input, so
// the person approves what runs and not a summary of it.
func TestCommandCards(t *testing.T) {
	b, _, _ := newBroker(t, 5*time.Second)
	r := run(700, 7, 3)
	cmd := "systemctl restart nginx && journalctl -u nginx -n 5"
	stdin := append([]byte(strings.Repeat("x", MaxStdinShown)), []byte("beyond the card")...)
	tk, err := b.RequestSessionFor(r, Continuity{Change: ChangeFirst}, Call{Channel: "ssh", Target: "deploy@web1:22", Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	p := b.Pending()
	if len(p) != 1 || p[0].Command != cmd || p[0].Channel != "ssh" || p[0].Target != "deploy@web1:22" {
		t.Fatalf("session card %+v", p)
	}
	if err := b.Answer(tk.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	s, err := tk.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- errOf(b.AskCall(context.Background(), r, s.ID, Call{Channel: "ssh", Method: "exec", Target: "deploy@web1:22",
			Credential: "web-1", Ref: "ssh_1", Command: cmd, Stdin: stdin}))
	}()
	var card Request
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if p := b.Pending(); len(p) == 1 {
			card = p[0]
			break
		}
	}
	if card.Command != cmd || card.StdinBytes != len(stdin) || len(card.Stdin) != MaxStdinShown || strings.Contains(card.Stdin, "beyond") {
		t.Fatalf("call card command %q, stdin %d shown of %d", card.Command, len(card.Stdin), card.StdinBytes)
	}
	if !strings.Contains(card.Sentence(), "“web-1”") || !strings.Contains(card.Sentence(), "exactly as shown") {
		t.Fatalf("sentence %q", card.Sentence())
	}
	if err := b.Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
