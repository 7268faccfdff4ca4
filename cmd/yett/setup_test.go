//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/nonroot"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
	"github.com/yettdev/yett/internal/testsupport/ptytest"
)

const (
	setupPassphrase = "moss lamp river cloud 7"
	setupCanary     = "CANARY-setup-secret-83e1a0"
)

// newHome is a new user's home on a fresh server: nothing of Yett yet.
func newHome(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "yhome") // short: the gateway's socket path must fit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return base
}

// watchProcesses samples every process's command line and environment
// until stop, and reports any that holds s.
func watchProcesses(t *testing.T, s string) (stop func()) {
	t.Helper()
	quit := make(chan struct{})
	var wg sync.WaitGroup
	var found []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			procs, _ := filepath.Glob("/proc/[0-9]*")
			for _, p := range procs {
				for _, f := range []string{"cmdline", "environ"} {
					if b, err := os.ReadFile(filepath.Join(p, f)); err == nil && strings.Contains(string(b), s) {
						found = append(found, p+"/"+f)
					}
				}
			}
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
		if len(found) > 0 {
			t.Errorf("the secret was in %v", found)
		}
	}
}

// TestHeadlessPath is a new user on a fresh server: yett init, yett
// credential add, yett connect (the device flow), yett operation add and
// yett serve, all typed into a shell on a terminal, and an
// agent's call reaches the receiver with the credential, approved at the
// serve terminal. The secret is typed at yett's prompt, so it is in no
// command line, no environment, no shell history and no output; every
// change is recorded with "terminal" as its surface.
func TestHeadlessPath(t *testing.T) { headlessPath(t, nil) }

// TestHeadlessPathNonRoot is the same path for a person who is not root
// (issues 18 and 19: the terminal check refused every such user, and the
// suite, which runs as root, never noticed): a throwaway account with its
// own terminal, home, yett and agent.
func TestHeadlessPathNonRoot(t *testing.T) { headlessPath(t, nonroot.Person(t)) }

func headlessPath(t *testing.T, as *nonroot.User) {
	home, yett := "", yettBin
	if as == nil {
		home = newHome(t)
	} else {
		home = as.Home
		yett = as.Install(t, yettBin, "yett")
	}
	env := homeEnv(home)
	recvURL, recvLog := startReceiver(t)
	host := strings.TrimPrefix(recvURL, "http://")
	provider := oauthtest.New(t, oauthtest.Options{DeviceInterval: time.Second})
	env = append(env, "PATH="+filepath.Dir(yett)+":"+os.Getenv("PATH"), "HISTFILE="+filepath.Join(home, ".bash_history"), "PS1=$ ")
	stop := watchProcesses(t, setupCanary)
	start := time.Now()

	sh := startPTYAs(t, as, env, "bash", "--norc", "--noprofile", "-i")
	sh.answer(t, "$ ", "yett init")
	sh.answer(t, "New passphrase: ", setupPassphrase)
	sh.answer(t, "The same passphrase again: ", setupPassphrase)
	sh.expect(t, "Vault created in "+home+"/data")
	sh.answer(t, "$ ", "yett credential add --name receiver --host "+host)
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.answer(t, "Secret for \"receiver\" (not shown as you type): ", setupCanary)
	sh.expect(t, "Added credential \"receiver\"")
	sh.answer(t, "$ ", "yett credential show receiver")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.expect(t, "stored; write-only, never shown")
	// An OAuth account by the device flow, and an operation on it: the
	// commands that add authority, as this person.
	sh.answer(t, "$ ", "yett connect --name tracker --issuer "+provider.URL+" --client-id yett-test --environment development"+
		" --scope read --api-host 127.0.0.1 --owner alice --backup-revoker bob")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	code := sh.capture(t, regexp.MustCompile(`enter the code\s+([A-Z0-9]{4}-[A-Z0-9]{4})`))
	if err := provider.ApproveDevice(code); err != nil {
		t.Fatalf("approving %q: %v", code, err)
	}
	sh.expect(t, `Connected "tracker"`)
	sh.answer(t, "$ ", "yett operation add --name tracker.list_items --account tracker --method get --url "+provider.URL+"/resource"+
		" --param state:string:required:allowed=open")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.expect(t, `Saved operation "tracker.list_items"`)
	setupDone := time.Since(start)

	sh.answer(t, "$ ", "yett serve --approval-timeout 30s")
	sh.answer(t, "Yett vault passphrase: ", setupPassphrase)
	sh.expect(t, "gateway listening")
	// The agent runs elsewhere (its own session), as an agent on the
	// server would, as the same person; it starts the real yett mcp.
	r := runAgent(t, as, env, yett, map[string]any{
		"method": "GET", "url": recvURL + "/headless-1", "headers": map[string]string{"X-Replay-Test-Id": "headless-1"},
	}, func() { sh.approveCard(t, 1) })
	total := time.Since(start)
	if r.err != nil || !strings.Contains(r.text, `"status":200`) {
		t.Fatalf("the agent's call: %+v; the terminal shows:\n%s", r, sh.screen.String())
	}
	evs := readEvents(t, recvLog)
	sum := sha256.Sum256([]byte("Bearer " + setupCanary))
	if len(evs) != 1 || evs[0]["request_id"] != "headless-1" || evs[0]["auth_marker"] != hex.EncodeToString(sum[:])[:12] {
		t.Fatalf("the receiver saw %v, want one call carrying the credential", evs)
	}
	sh.answer(t, "[1] approved.", "quit")
	sh.expect(t, "yett serve: stopped")
	sh.answer(t, "$ ", "exit")
	if code := sh.wait(t); code != 0 {
		t.Errorf("the shell exited %d", code)
	}
	stop()
	t.Logf("headless path for a new user%s: yett init, credential add, connect, operation add, serve and one approval; "+
		"set up in %s, first agent call answered %s after the first command (including typing, five unlocks, one device flow and one vault creation at the default Argon2id cost)",
		asWho(as), setupDone.Round(10*time.Millisecond), total.Round(10*time.Millisecond))

	history, err := os.ReadFile(filepath.Join(home, ".bash_history"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(history), "yett credential add --name receiver") {
		t.Fatalf("the shell kept no history, so the check below proves nothing:\n%s", history)
	}
	for name, out := range map[string]string{"the terminal": sh.screen.String(), "the shell history": string(history), "the agent's answer": r.text} {
		for _, secret := range []string{setupCanary, setupPassphrase} {
			if strings.Contains(out, secret) {
				t.Errorf("a secret (%.12s...) is in %s", secret, name)
			}
		}
	}
	if as != nil {
		checkOwnedBy(t, as, filepath.Join(home, "data"))
	}
	checkTerminalEntries(t, home)
	if os.Getenv("SHOWSCREEN") != "" {
		t.Log(sh.screen.String())
	}
}

func asWho(as *nonroot.User) string {
	if as == nil {
		return ""
	}
	return " who is not root, " + as.String()
}

// checkOwnedBy: everything Yett wrote for the person is theirs and private.
func checkOwnedBy(t *testing.T, as *nonroot.User, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != as.UID {
			t.Errorf("%s belongs to uid %d, not %s", p, st.Uid, as)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is mode %v: others may read it", p, fi.Mode().Perm())
		}
		return nil
	})
}

// checkTerminalEntries reads the audit log: what the setup commands did is
// recorded with "terminal" as its surface and no gateway's boot id; the
// secret is in no entry.
// auditEntries reads the audit log of the data directory in home with the
// vault's key, failing the test on any entry that holds the secret.
func auditEntries(t *testing.T, home string) []audit.Entry {
	t.Helper()
	dataDir := filepath.Join(home, "data")
	v, err := vault.Open(dataDir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Unlock(vault.Passphrase(setupPassphrase)); err != nil {
		t.Fatal(err)
	}
	id, err := v.AuditIdentity()
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for e, err := range audit.ReadEvents(filepath.Join(dataDir, gateway.AuditDir, audit.LogFile), id) {
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(e.Event); strings.Contains(string(b), setupCanary) {
			t.Errorf("the secret is in a %s entry", e.Event.Type)
		}
		out = append(out, e)
	}
	return out
}

func checkTerminalEntries(t *testing.T, home string) {
	t.Helper()
	var created, setupLocks, approved, added, connected, saved int
	for _, e := range auditEntries(t, home) {
		switch {
		case e.Event.Type == audit.EventVaultUnlocked && e.Event.Reason == audit.ReasonVaultCreated:
			created++
			if e.Event.Surface != originTerminal || e.Event.BootID != "" {
				t.Errorf("the vault's creation: surface %q, boot %q; want terminal and none", e.Event.Surface, e.Event.BootID)
			}
		case e.Event.Type == audit.EventVaultLocked && e.Event.BootID == "":
			setupLocks++
			if e.Event.Surface != originTerminal {
				t.Errorf("a setup command's lock with surface %q", e.Event.Surface)
			}
		case e.Event.Type == audit.EventVaultChanged:
			added++
			if c := e.Event.VaultChange; c == nil || c.Change != "credential_added" || c.Name != "receiver" || e.Event.Surface != originTerminal {
				t.Errorf("vault_changed %+v with surface %q; want credential_added of receiver at the terminal", c, e.Event.Surface)
			}
		case e.Event.Type == audit.EventAuthorizationConnected:
			connected++
			if e.Event.Surface != originTerminal {
				t.Errorf("the account's connection has surface %q", e.Event.Surface)
			}
		case e.Event.Type == audit.EventOperationSaved:
			saved++
			if e.Event.Surface != originTerminal || e.Event.NamedOperation == nil || e.Event.NamedOperation.Name != "tracker.list_items" {
				t.Errorf("operation_saved %+v with surface %q", e.Event.NamedOperation, e.Event.Surface)
			}
		case e.Event.Type == audit.EventSessionApproved:
			approved++
			if e.Event.Surface != "terminal" {
				t.Errorf("the approval at the serve terminal has surface %q", e.Event.Surface)
			}
			// Where the answer came from, and what was checked of it.
			if v := e.Event.Via; v == nil || v.Surface != "terminal" || !strings.Contains(v.Detail, "/dev/pts/") ||
				!strings.Contains(v.Detail, "one-time code checked") {
				t.Errorf("the approval at the serve terminal records %+v", v)
			}
		}
	}
	// init, credential add, credential show, connect and operation add each
	// lock the vault as they end.
	if created != 1 || setupLocks != 5 || approved != 1 || added != 1 || connected != 1 || saved != 1 {
		t.Errorf("%d creations, %d setup commands' locks, %d approvals, %d credential changes, %d connections, %d operations saved; want 1, 5, 1, 1, 1, 1",
			created, setupLocks, approved, added, connected, saved)
	}
}

// TestSetupRefusesWithoutATerminal: each setup command that changes
// something refuses before it asks anything when standard input is not the
// person's controlling terminal: a pipe with no terminal at all, a pipe
// while a terminal is there, and a terminal that is not the controlling
// one. (list and show only read: TestReadCommandsWithoutATerminal.)
func TestSetupRefusesWithoutATerminal(t *testing.T) {
	commands := [][]string{
		{"init"}, {"credential", "add", "--name", "x", "--host", "api.example.com"},
		{"credential", "edit", "x", "--host", "api.example.com"}, {"credential", "rotate", "x"},
		{"credential", "remove", "x"}, {"credential", "import", "x.env", "--all"}, {"connect", "--name", "x", "--client-id", "c", "--environment", "staging", "--provider", "github"},
		{"accounts", "revoke", "x"}, {"operation", "remove", "x.y"},
		{"operation", "add", "--name", "x.y", "--account", "a", "--method", "GET", "--url", "https://api.example.com/"},
		{"mcp-server", "add", "--name", "x", "--command", "/bin/true", "--secret-env", "TOKEN"},
		{"mcp-server", "remove", "x"}, {"mcp-server", "set", "x", "--approval", "session"},
		{"ssh-host", "add", "--name", "x", "--address", "127.0.0.1", "--user", "u"}, {"ssh-host", "pin", "x", "--known-hosts"},
		{"ssh-host", "remove", "x"},
	}
	for _, args := range commands {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			home := newHome(t)
			// No controlling terminal; the passphrase and a secret on stdin.
			cmd := exec.Command(yettBin, args...)
			cmd.Env = homeEnv(home)
			cmd.Stdin = strings.NewReader(setupPassphrase + "\n" + setupPassphrase + "\n" + setupCanary + "\ny\n")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			out, err := cmd.CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), "from a person at a terminal") {
				t.Fatalf("exit %d, output %q", code, out)
			}
			// A terminal is there, but stdin is a pipe (a program feeding it).
			r := startPTYWithStdin(t, homeEnv(home), strings.NewReader(setupPassphrase+"\n"), args...)
			if code := r.wait(t); code != 2 || !strings.Contains(r.screen.String(), "from a person at a terminal") {
				t.Fatalf("stdin a pipe under a terminal: exit %d, terminal %q", code, r.screen.String())
			}
			if _, err := os.Stat(filepath.Join(home, "data", vault.FileName)); err == nil {
				t.Fatal("a vault file was made by a refused command")
			}
		})
	}
	t.Run("a terminal that is not the controlling one", func(t *testing.T) {
		home := newHome(t)
		_, ctl := ptytest.Open(t)
		_, other := ptytest.Open(t)
		cmd := exec.Command(yettBin, "init")
		cmd.Env = homeEnv(home)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = other, other, other
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
		cmd.ExtraFiles = []*os.File{ctl}
		if err := cmd.Run(); exitCode(err) != 2 {
			t.Fatalf("exit %v with stdin on a terminal that is not the controlling one", err)
		}
	})
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
