package presence

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/internal/testsupport/nonroot"
	"github.com/yettdev/yett/internal/testsupport/polkittest"
)

const testPassword = "person's password 7c1e"

// The person's side of the test: this binary re-executed as the person
// (polkit always authorizes root) verifies once per line it reads ("card
// summary") and prints "ok PROOF" or "err TEXT".
func TestMain(m *testing.M) {
	if os.Getenv("YETT_PRESENCE_SOCKET") != "" {
		os.Exit(verifierMain())
	}
	os.Exit(m.Run())
}

func verifierMain() int {
	p := &Polkit{Socket: os.Getenv("YETT_PRESENCE_SOCKET")}
	fmt.Println("pid", os.Getpid())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		card, summary, _ := strings.Cut(in.Text(), " ")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		proof, err := p.Verify(ctx, Request{Card: card, Summary: summary})
		cancel()
		if err != nil {
			fmt.Println("err", err)
		} else {
			fmt.Println("ok", proof)
		}
	}
	return 0
}

type person struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startPerson(t *testing.T, as *nonroot.User, socket string) (*person, int) {
	t.Helper()
	self := as.Install(t, os.Args[0], "verifier")
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + as.Home, "YETT_PRESENCE_SOCKET=" + socket}
	cmd.Dir = as.Home
	as.Run(cmd)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	p := &person{t: t, cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	first := p.line(10 * time.Second)
	pid, err := strconv.Atoi(strings.TrimPrefix(first, "pid "))
	if err != nil {
		t.Fatalf("the verifier said %q", first)
	}
	return p, pid
}

func (p *person) ask(card string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, card+" approve-claude-to-use-api.example.com\n"); err != nil {
		p.t.Fatal(err)
	}
}

// line returns the next line, or "" after d.
func (p *person) line(d time.Duration) string {
	select {
	case l := <-p.lines:
		return l
	case <-time.After(d):
		return ""
	}
}

// TestPolkitVerifiesThePerson is issue 18's system verification against
// a real polkitd on a private system bus, a real authentication agent
// (pkttyagent) and a throwaway user with a PAM password: the right password
// verifies, a wrong one does not, a verification never carries over to the
// next card (each check asks again), and without an agent nothing is
// verified and nothing waits.
func TestPolkitVerifiesThePerson(t *testing.T) {
	as := nonroot.Person(t)
	as.SetPassword(t, testPassword)
	pk := polkittest.Start(t, filepath.Join("..", "..", "build", "linux"))
	socket := strings.TrimPrefix(pk.Address, "unix:path=")

	// No agent registered: refused at once, as unavailable.
	p, pid := startPerson(t, as, socket)
	start := time.Now()
	p.ask("rq-none")
	if l := p.line(20 * time.Second); !strings.HasPrefix(l, "err") || !strings.Contains(l, "no polkit authentication agent") {
		t.Fatalf("with no agent: %q", l)
	}
	t.Logf("with no agent: refused in %v", time.Since(start).Round(time.Millisecond))

	agent := pk.Agent(t, as, pid)
	start = time.Now()
	p.ask("rq-A")
	agent.Answer(t, testPassword)
	l := p.line(20 * time.Second)
	if l != "ok polkit: the password of "+as.Name {
		t.Fatalf("the right password: %q; the agent shows %q", l, agent.Screen())
	}
	t.Logf("the right password: verified %v after the check began (prompt, typing, PAM)", time.Since(start).Round(time.Millisecond))

	// The next card asks again: nothing was kept from card A.
	prompts := strings.Count(agent.Screen(), "Password:")
	p.ask("rq-B")
	if l := p.line(1500 * time.Millisecond); l != "" {
		t.Fatalf("card B was answered %q without the person: a verification carried over", l)
	}
	if strings.Count(agent.Screen(), "Password:") <= prompts {
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(agent.Screen(), "Password:") <= prompts && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	agent.Answer(t, "not the password")
	if l := p.line(30 * time.Second); !strings.HasPrefix(l, "err") || !strings.Contains(l, ErrNotVerified.Error()) {
		t.Fatalf("a wrong password: %q; the agent shows %q", l, agent.Screen())
	}
}

// A bus whose listener is not root is not the system bus: a program of the
// user could make one and answer "authorized".
func TestPolkitRefusesABusNotRoots(t *testing.T) {
	as := nonroot.Person(t)
	dir := as.Dir(t, "bus")
	sock := filepath.Join(dir, "fake.sock")
	bus := exec.Command("dbus-daemon", "--nofork", "--session", "--address=unix:path="+sock)
	as.Run(bus)
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if os.Getuid() != 0 {
		t.Fatal("this test needs a bus of another user than root's: run as root (CI does)")
	}
	_, err := (&Polkit{Socket: sock}).dial(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not root's") {
		t.Fatalf("a bus a user made: %v", err)
	}
}
