//go:build linux

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/vault/kernelkeyring"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// capture waits until re matches the terminal after what the last expect
// matched, and returns its first group.
func (r *ptyRun) capture(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := r.screen.String()
		if m := re.FindStringSubmatchIndex(out[r.pos:]); m != nil {
			got := out[r.pos+m[2] : r.pos+m[3]]
			r.pos += m[1]
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %s; it shows:\n%s", re, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runSetup runs one setup command on a terminal of its own, types the
// vault passphrase (or, for init, chooses it), then lets do drive the rest,
// and requires exit 0. It returns what the terminal showed.
func runSetup(t *testing.T, env []string, do func(r *ptyRun), args ...string) string {
	t.Helper()
	r := startPTY(t, env, yettBin, args...)
	if args[0] == "init" {
		r.answer(t, "New passphrase: ", setupPassphrase)
		r.answer(t, "The same passphrase again: ", setupPassphrase)
	} else {
		r.answer(t, "Yett vault passphrase: ", setupPassphrase)
	}
	if do != nil {
		do(r)
	}
	if code := r.wait(t); code != 0 {
		t.Fatalf("yett %s exited %d; the terminal shows:\n%s", strings.Join(args, " "), code, r.screen.String())
	}
	return r.screen.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestHeadlessOAuth: on a fresh server, everything yett serve serves for
// OAuth is set up at the terminal: the device flow (against the test
// provider: Hydra v2.3.0 has no device flow) and the authorization code
// flow with a printed URL and a chosen loopback port (against a real Ory
// Hydra, whose login and consent a browser elsewhere plays), a named
// operation on the device-flow account, yett accounts; then yett serve
// serves the operation to a real yett mcp agent approved at its terminal,
// and yett accounts revoke revokes the Hydra account at Hydra. Every
// change is recorded with "terminal" as its surface.
func TestHeadlessOAuth(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	hydraClient := h.CreateClient(t, hydratest.ClientSpec{
		AuthMethod: "none", RedirectURIs: []string{"http://127.0.0.1/callback"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, Scopes: []string{"openid", "offline_access", "offline"},
	})
	p := oauthtest.New(t, oauthtest.Options{DeviceInterval: time.Second})
	home := newHome(t)
	env := homeEnv(home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	runSetup(t, env, func(r *ptyRun) { r.expect(t, "Vault created") }, "init")

	// The device flow: the code is shown at the terminal; the person
	// enters it on another device (here: the provider approves it).
	runSetup(t, env, func(r *ptyRun) {
		code := r.capture(t, regexp.MustCompile(`enter the code\s+([A-Z0-9]{4}-[A-Z0-9]{4})`))
		r.expect(t, "Waiting for the provider")
		if err := p.ApproveDevice(code); err != nil {
			t.Fatalf("approving %q: %v", code, err)
		}
		r.expect(t, `Connected "tracker"`)
	}, "connect", "--name", "tracker", "--issuer", p.URL, "--client-id", "yett-test", "--environment", "development",
		"--scope", "read", "--api-host", "127.0.0.1", "--owner", "alice", "--backup-revoker", "bob")

	// The authorization code flow: the address is printed, the browser (on
	// another machine, through the forwarded port) consents, and comes back
	// to the loopback port the person chose.
	port := strconv.Itoa(freePort(t))
	runSetup(t, env, func(r *ptyRun) {
		authURL := r.capture(t, regexp.MustCompile(`consent:\s+(http\S+)`))
		r.expect(t, "ssh -L "+port+":127.0.0.1:"+port)
		r.expect(t, "Waiting for the provider")
		if !strings.Contains(authURL, "code_challenge_method=S256") || !strings.Contains(authURL, "127.0.0.1%3A"+port) {
			t.Errorf("the printed address %q lacks PKCE S256 or the chosen port", authURL)
		}
		status, final, err := h.Browse(ctx, authURL)
		if err != nil || status != 200 || !strings.HasPrefix(final, "http://127.0.0.1:"+port+"/") {
			t.Fatalf("the browser: status %d, ended at %q, %v", status, final, err)
		}
		r.expect(t, `Connected "hydra"`)
	}, "connect", "--name", "hydra", "--flow", "code", "--callback-port", port, "--issuer", h.Issuer,
		"--authorization-endpoint", h.PublicURL+"/oauth2/auth", "--token-endpoint", h.PublicURL+"/oauth2/token",
		"--revocation-endpoint", h.PublicURL+"/oauth2/revoke", "--introspection-endpoint", h.AdminURL+"/admin/oauth2/introspect",
		"--client-id", hydraClient, "--environment", "staging", "--scope", "openid", "--owner", "carol", "--backup-revoker", "dave")

	runSetup(t, env, func(r *ptyRun) { r.expect(t, `Saved operation "tracker.list_items"`) },
		"operation", "add", "--name", "tracker.list_items", "--account", "tracker", "--method", "get",
		"--url", p.URL+"/resource", "--param", "state:string:required:allowed=open|closed", "--description", "List tracker items", "--read-only")
	// The account's token goes only to its API hosts: an operation
	// elsewhere is refused, with what to do.
	off := startPTY(t, env, yettBin, "operation", "add", "--name", "tracker.export", "--account", "tracker", "--method", "post",
		"--url", strings.Replace(p.URL, "127.0.0.1", "localhost", 1)+"/collect")
	off.answer(t, "Yett vault passphrase: ", setupPassphrase)
	off.expect(t, "localhost is not one of the authorization's API hosts (127.0.0.1)")
	if code := off.wait(t); code == 0 {
		t.Fatal("yett operation add saved an operation off the account's API hosts")
	}
	runSetup(t, env, func(r *ptyRun) {
		// One row per account, in either order, with its owner and backup
		// revoker (the owner inventory's: the one that names no account
		// is not under control) and the operations that use it.
		for _, row := range []string{
			`(tracker)\s+127\.0\.0\.1:\d+\s+-\s+development\s+active, not under control\s+alice\s+bob\s+tracker\.list_items`,
			`(tracker): not under control, missing account`,
			`(hydra)\s+127\.0\.0\.1:\d+\s+alice@example\.test\s+staging\s+active\s+carol\s+dave\s+-`,
		} {
			r.pos = 0
			r.capture(t, regexp.MustCompile(row))
		}
	}, "accounts")

	// yett serve serves the operation: the agent names it and its
	// parameter, never a token.
	serve := startPTY(t, env, yettBin, "serve", "--approval-timeout", "60s")
	serve.answer(t, "Yett vault passphrase: ", setupPassphrase)
	serve.expect(t, "gateway listening")
	shim := exec.Command(yettBin, "mcp")
	shim.Env = env
	s, err := mcp.NewClient(&mcp.Implementation{Name: "headless-oauth-agent", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: shim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The person said it only reads: the agent's client is told so.
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed *mcp.Tool
	for _, tool := range tools.Tools {
		if tool.Name == "tracker.list_items" {
			listed = tool
		}
	}
	if listed == nil || listed.Annotations == nil || !listed.Annotations.ReadOnlyHint || listed.Title != "List tracker items" {
		t.Fatalf("the operation as listed: %+v", listed)
	}
	done := make(chan string, 1)
	go func() {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "tracker.list_items", Arguments: map[string]any{"state": "open"}})
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- callText(res)
	}()
	serve.approveCard(t, 1)
	var text string
	select {
	case text = <-done:
	case <-ctx.Done():
		t.Fatalf("no answer; the terminal shows:\n%s", serve.screen.String())
	}
	if !strings.Contains(text, `"status":200`) || !strings.Contains(text, `\"scope\":\"read\"`) {
		t.Fatalf("the operation's answer: %s", text)
	}
	serve.answer(t, "[1] approved.", "quit")
	serve.expect(t, "yett serve: stopped")
	if code := serve.wait(t); code != 0 {
		t.Fatalf("yett serve exited %d", code)
	}

	// Issue 20: a name in use is refused before any address is printed,
	// so no browser consents to a grant Yett would not keep.
	clash := startPTY(t, env, yettBin, "connect", "--name", "hydra", "--flow", "code", "--issuer", h.Issuer,
		"--authorization-endpoint", h.PublicURL+"/oauth2/auth", "--token-endpoint", h.PublicURL+"/oauth2/token",
		"--client-id", hydraClient, "--environment", "staging", "--scope", "openid", "--owner", "carol", "--backup-revoker", "dave")
	clash.answer(t, "Yett vault passphrase: ", setupPassphrase)
	clash.expect(t, `an authorization named "hydra" exists`)
	if code := clash.wait(t); code == 0 || strings.Contains(clash.screen.String(), "consent:") {
		t.Fatalf("a connection under a name in use: exit %d, terminal:\n%s", code, clash.screen.String())
	}
	// Endpoints are set after connecting, under the one plain-http rule.
	bad := startPTY(t, env, yettBin, "accounts", "endpoints", "hydra", "--introspection", "http://collector.example/introspect")
	bad.answer(t, "Yett vault passphrase: ", setupPassphrase)
	bad.expect(t, "not https")
	if code := bad.wait(t); code == 0 {
		t.Fatal("yett accounts endpoints accepted plain http to another host")
	}
	runSetup(t, env, func(r *ptyRun) {
		r.expect(t, "verified at (no introspection endpoint)")
	}, "accounts", "endpoints", "hydra", "--introspection", "")
	runSetup(t, env, func(r *ptyRun) {
		r.expect(t, "verified at "+h.AdminURL+"/admin/oauth2/introspect")
	}, "accounts", "endpoints", "hydra", "--introspection", h.AdminURL+"/admin/oauth2/introspect")

	runSetup(t, env, func(r *ptyRun) {
		r.answer(t, "Its operations stop at once. [y/N] ", "y")
		for _, step := range []string{"local disable", "provider revocation", "verification"} {
			r.capture(t, regexp.MustCompile(`(`+step+`)\s+ok\s`))
		}
	}, "accounts", "revoke", "hydra")

	checkOAuthEntries(t, home)
}

// checkOAuthEntries: both connections, the operation and the revocation
// are in the audit log with "terminal" as their surface.
func checkOAuthEntries(t *testing.T, home string) {
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
	count := map[audit.EventType]int{}
	for e, err := range audit.ReadEvents(filepath.Join(dataDir, gateway.AuditDir, audit.LogFile), id) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Event.Type {
		case audit.EventAuthorizationConnected, audit.EventOperationSaved, audit.EventAuthorizationDisabled, audit.EventAuthorizationRevoked,
			audit.EventAuthorizationEdited:
			count[e.Event.Type]++
			if e.Event.Surface != originTerminal {
				t.Errorf("%s with surface %q, want terminal", e.Event.Type, e.Event.Surface)
			}
		}
	}
	for typ, want := range map[audit.EventType]int{
		// The revocation: disabled locally, then the access token revoked at
		// Hydra and verified inactive (no refresh token was asked for).
		audit.EventAuthorizationConnected: 2, audit.EventOperationSaved: 1,
		audit.EventAuthorizationDisabled: 1, audit.EventAuthorizationRevoked: 2,
		// The introspection endpoint removed, then set again, at the terminal.
		audit.EventAuthorizationEdited: 2,
	} {
		if count[typ] != want {
			t.Errorf("%d %s entries, want %d", count[typ], typ, want)
		}
	}
}

// TestSecretFromDescriptor: a secret kept in a file reaches the vault
// through a descriptor the person opens (--secret-fd 3 3<file): it is in no
// command line, environment or output, and is stored without its newline.
func TestSecretFromDescriptor(t *testing.T) {
	home := newHome(t)
	env := append(homeEnv(home), "PATH="+filepath.Dir(yettBin)+":"+os.Getenv("PATH"))
	secretFile := filepath.Join(home, "secret")
	if err := os.WriteFile(secretFile, []byte(setupCanary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runSetup(t, env, func(r *ptyRun) { r.expect(t, "Vault created") }, "init")
	stop := watchProcesses(t, setupCanary)
	r := startPTY(t, env, "bash", "--norc", "--noprofile", "-c", "exec yett credential add --name fromfile --host api.example.com --secret-fd 3 3<"+secretFile)
	r.answer(t, "Yett vault passphrase: ", setupPassphrase)
	r.expect(t, `Added credential "fromfile"`)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, r.screen.String())
	}
	stop()
	if strings.Contains(r.screen.String(), setupCanary) || strings.Contains(r.screen.String(), "Secret for") {
		t.Fatalf("the terminal shows the secret or asked for it:\n%s", r.screen.String())
	}
	v, err := vault.Open(filepath.Join(home, "data"), vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Unlock(vault.Passphrase(setupPassphrase)); err != nil {
		t.Fatal(err)
	}
	list, err := v.Credentials().List()
	if err != nil || len(list) != 1 {
		t.Fatalf("credentials: %v %v", list, err)
	}
	s, err := v.Credentials().SecretOf(list[0].ID, list[0].Version)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Wipe()
	if string(s.Bytes()) != setupCanary {
		t.Fatal("the stored secret is not the file's content without its newline")
	}
}

// TestSetupRefusesWhileServeRuns: yett serve writes the audit log, which
// takes one writer, so a setup command refuses while it runs, changes
// nothing and says what to do; once serve has quit, the same command works.
func TestSetupRefusesWhileServeRuns(t *testing.T) {
	home := newHome(t)
	env := homeEnv(home)
	runSetup(t, env, func(r *ptyRun) { r.expect(t, "Vault created") }, "init")
	serve := startPTY(t, env, yettBin, "serve")
	serve.answer(t, "Yett vault passphrase: ", setupPassphrase)
	serve.expect(t, "gateway listening")

	r := startPTY(t, env, yettBin, "credential", "add", "--name", "late", "--host", "api.example.com")
	r.expect(t, "yett serve is running for this user")
	if code := r.wait(t); code != 1 {
		t.Fatalf("exit %d while yett serve runs; the terminal shows:\n%s", code, r.screen.String())
	}
	if strings.Contains(r.screen.String(), "passphrase") || strings.Contains(r.screen.String(), "Secret for") {
		t.Fatalf("something was asked for although nothing could be recorded:\n%s", r.screen.String())
	}
	if _, err := serve.master.Write([]byte("quit\n")); err != nil {
		t.Fatal(err)
	}
	serve.expect(t, "yett serve: stopped")
	if code := serve.wait(t); code != 0 {
		t.Fatalf("yett serve exited %d", code)
	}
	runSetup(t, env, func(r *ptyRun) { r.expect(t, "No credentials") }, "credential", "list")
}

// initWithKernelKeyring runs yett init --keyring in a new home, and removes
// the vault's key from the kernel keyring when the test ends.
func initWithKernelKeyring(t *testing.T) (home string, env []string) {
	t.Helper()
	home = newHome(t)
	env = homeEnv(home)
	runSetup(t, env, func(r *ptyRun) { r.expect(t, "or the kernel keyring until the next reboot") }, "init", "--keyring")
	t.Cleanup(func() {
		v, err := vault.Open(filepath.Join(home, "data"), vault.Options{Keyring: kernelkeyring.Default()})
		if err != nil {
			t.Error(err)
			return
		}
		defer v.Close()
		if err := v.Unlock(vault.Passphrase(setupPassphrase)); err != nil {
			t.Error(err)
			return
		}
		if err := v.EnableKeyring(false); err != nil {
			t.Errorf("removing the test vault's key from the kernel keyring: %v", err)
		}
	})
	return home, env
}

// TestInitWithKernelKeyring: yett init --keyring keeps a key in the kernel
// keyring, so the next setup command opens the vault without asking for
// the passphrase. The key is removed at the end.
func TestInitWithKernelKeyring(t *testing.T) {
	_, env := initWithKernelKeyring(t)
	r := startPTY(t, env, yettBin, "credential", "list")
	r.expect(t, "No credentials")
	if code := r.wait(t); code != 0 || strings.Contains(r.screen.String(), "passphrase") {
		t.Fatalf("exit %d; the terminal shows:\n%s", code, r.screen.String())
	}
}

// TestKeyringNeverAuthorizesAChange is issue 18, item 4: an agent gives a
// setup command a terminal of its own from plain pipes (script(1), Python's
// pty module) and types the answers. With keyring unlock on, `credential
// add`, `operation add` and `connect` opened the vault without a passphrase
// and did what the agent typed. Now a command that adds or widens authority
// asks for the vault passphrase every time (the agent does not know it),
// while one that only reads still opens with the keyring.
func TestKeyringNeverAuthorizesAChange(t *testing.T) {
	_, env := initWithKernelKeyring(t)
	quote := func(args []string) string {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = "'" + a + "'"
		}
		return strings.Join(q, " ")
	}
	widen := [][]string{
		{yettBin, "credential", "add", "--name", "evil", "--host", "collector.example"},
		{yettBin, "operation", "add", "--name", "evil.send", "--account", "a", "--method", "POST", "--url", "https://collector.example/x"},
		{yettBin, "connect", "--name", "evil", "--client-id", "c", "--environment", "production", "--provider", "github",
			"--owner", "agent", "--backup-revoker", "agent"},
	}
	// What the agent types: guesses at the passphrase, then the answers a
	// command without one would take (a secret, a yes).
	answers := "guess-1\nguess-2\nguess-3\n" + setupCanary + "\ny\ny\n"
	for _, args := range widen {
		for _, via := range []struct {
			name string
			argv []string
		}{
			{"script", []string{"script", "-qefc", quote(args), "/dev/null"}},
			{"python pty", append([]string{"python3", "-c", "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)"}, args...)},
		} {
			t.Run(args[1]+" "+args[2]+" through "+via.name, func(t *testing.T) {
				cmd := exec.Command(via.argv[0], via.argv[1:]...)
				cmd.Env = env
				cmd.Stdin = strings.NewReader(answers)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // plain pipes, no terminal of the agent's
				out, _ := cmd.CombinedOutput()
				// The vault's throttle (after a few wrong passphrases) may
				// refuse a guess before it is tried: refused either way.
				refused := strings.Contains(string(out), "Wrong passphrase.") || strings.Contains(string(out), "too many wrong passphrases")
				if !strings.Contains(string(out), "Yett vault passphrase:") || !refused {
					t.Fatalf("the keyring opened the vault for a change (no passphrase asked, or a guess taken):\n%s", out)
				}
			})
		}
	}
	// Reading needs no passphrase with the keyring, and nothing was added.
	for _, list := range [][]string{{"credential", "list"}, {"operation", "list"}, {"accounts"}} {
		r := startPTY(t, env, yettBin, list...)
		if code := r.wait(t); code != 0 || strings.Contains(r.screen.String(), "passphrase") || strings.Contains(r.screen.String(), "evil") {
			t.Fatalf("yett %s: exit %d; the terminal shows:\n%s", strings.Join(list, " "), code, r.screen.String())
		}
	}
}
