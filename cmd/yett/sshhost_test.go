//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/internal/testsupport/nonroot"
	"github.com/yettdev/yett/internal/testsupport/sshdtest"
)

// TestSSHHostCommands is an SSH host set up entirely at a terminal, as on a
// server without a desktop: yett ssh-host add makes the key and prints
// the authorized_keys line, pin --trust-on-first-use pins the real sshd's
// key, show gives the inventory's word (under control: owner, backup
// revoker and environment given at add), an agent's ssh.exec runs through
// yett serve, a second host imports a passphrase-protected key file
// (left byte for byte as it was) and is pinned from a file, and remove
// takes the host away. Every change is recorded with "terminal" as its
// surface.
func TestSSHHostCommands(t *testing.T) { sshHostCommands(t, nil) }

// TestSSHHostCommandsNonRoot is the same path for a person who is not root.
func TestSSHHostCommandsNonRoot(t *testing.T) { sshHostCommands(t, nonroot.Person(t)) }

func sshHostCommands(t *testing.T, as *nonroot.User) {
	home, yett := "", yettBin
	if as == nil {
		home = newHome(t)
	} else {
		home = as.Home
		yett = as.Install(t, yettBin, "yett")
	}
	env := homeEnv(home)
	srv := sshdtest.Start(t)
	run := func(do func(r *ptyRun), args ...string) string {
		t.Helper()
		r := startPTYAs(t, as, env, yett, args...)
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
	run(nil, "init")
	out := run(nil, "ssh-host", "add", "--name", "box", "--address", srv.Host, "--port", strconv.Itoa(srv.Port), "--user", srv.User,
		"--approval", "session", "--rule", "exact: echo hello-from-box", "--owner", "alice", "--backup-revoker", "bob", "--environment", "development")
	pub := regexp.MustCompile(`ssh-ed25519 [A-Za-z0-9+/=]+ yett:box`).FindString(out)
	if pub == "" || !strings.Contains(out, "yett ssh-host pin box") {
		t.Fatalf("ssh-host add did not print the authorized_keys line and the next step:\n%s", out)
	}
	srv.Authorize(t, pub)
	// An agent cannot use it yet: show says why.
	if out := run(nil, "ssh-host", "show", "box"); !strings.Contains(out, "no pinned host key") {
		t.Fatalf("show before the pin:\n%s", out)
	}
	hostType := strings.Fields(srv.HostKey)[0]
	if out := run(nil, "ssh-host", "pin", "box", "--trust-on-first-use"); !strings.Contains(out, "Pinned 1 host key(s) of \"box\"") ||
		!strings.Contains(out, hostType+" SHA256:") {
		t.Fatalf("pin --trust-on-first-use:\n%s", out)
	}
	out = run(nil, "ssh-host", "show", "box")
	for _, want := range []string{"under control (development)", "host key", "exact: echo hello-from-box", "alice", "bob"} {
		if !strings.Contains(out, want) {
			t.Errorf("show after the pin lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "PRIVATE KEY") {
		t.Fatal("show printed a private key")
	}

	// An agent's command through yett serve, approved at its terminal.
	serve := startPTYAs(t, as, env, yett, "serve", "--approval-timeout", "30s")
	serve.answer(t, "Yett vault passphrase: ", setupPassphrase)
	serve.expect(t, "gateway listening")
	r := runAgent(t, as, env, yett, map[string]any{"_tool": "ssh.exec", "host": "box", "command": "echo hello-from-box"},
		func() { serve.approveCard(t, 1) })
	if r.err != nil || !strings.Contains(r.text, "hello-from-box") {
		t.Fatalf("the agent's ssh.exec: %+v; the terminal shows:\n%s", r, serve.screen.String())
	}
	serve.answer(t, "[1] approved.", "quit")
	serve.expect(t, "yett serve: stopped")
	serve.wait(t)

	// A second host with an imported, passphrase-protected key, pinned
	// from a file of ssh-keyscan-like lines.
	keys := t.TempDir()
	if as != nil {
		keys = as.Home // where the person keeps their files
	}
	keyFile := filepath.Join(keys, "id_ed25519")
	const keyPass = "key-pass-3f1c"
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", keyPass, "-C", "imported", "-f", keyFile).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pins := filepath.Join(keys, "pins")
	if err := os.WriteFile(pins, []byte(srv.Host+" "+srv.HostKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if as != nil {
		for _, f := range []string{keyFile, keyFile + ".pub", pins} {
			if err := os.Chown(f, as.UID, as.GID); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	out = run(func(r *ptyRun) { r.answer(t, "The key file's passphrase (not shown as you type): ", keyPass) },
		"ssh-host", "add", "--name", "imported", "--address", srv.Host, "--port", strconv.Itoa(srv.Port), "--user", srv.User, "--key-file", keyFile)
	wantPub, _ := os.ReadFile(keyFile + ".pub")
	if !strings.Contains(out, "its key is imported") || !strings.Contains(out, strings.Fields(string(wantPub))[1]) {
		t.Fatalf("the import did not print the key file's public half:\n%s", out)
	}
	if after, _ := os.ReadFile(keyFile); !bytes.Equal(before, after) {
		t.Fatal("the key file changed")
	}
	if out := run(nil, "ssh-host", "pin", "imported", "--from", pins); !strings.Contains(out, "Pinned 1 host key(s)") {
		t.Fatalf("pin --from:\n%s", out)
	}
	out = run(func(r *ptyRun) { r.answer(t, "Agents lose it at once", "y") }, "ssh-host", "remove", "imported")
	if !strings.Contains(out, "Removed SSH host \"imported\"") {
		t.Fatalf("remove:\n%s", out)
	}
	if out := run(nil, "ssh-host", "list"); !strings.Contains(out, "box") || strings.Contains(out, "imported") {
		t.Fatalf("list after the remove:\n%s", out)
	}

	var added, removed, pinned int
	for _, e := range auditEntries(t, home) {
		switch {
		case e.Event.Type == audit.EventVaultChanged && e.Event.VaultChange != nil && e.Event.VaultChange.Change == "ssh_host_added":
			added++
		case e.Event.Type == audit.EventVaultChanged && e.Event.VaultChange != nil && e.Event.VaultChange.Change == "ssh_host_removed":
			removed++
		case e.Event.Type == audit.EventSSHHostKeyPinned:
			pinned++
		default:
			continue
		}
		if e.Event.Surface != originTerminal {
			t.Errorf("%s has surface %q, want terminal", e.Event.Type, e.Event.Surface)
		}
	}
	if added != 2 || removed != 1 || pinned != 2 {
		t.Errorf("%d hosts added, %d removed, %d pins recorded; want 2, 1, 2", added, removed, pinned)
	}
	// The key's passphrase was typed with echo off: on no screen, in no
	// file of Yett's.
	filepath.Walk(filepath.Join(home, "data"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(keyPass)) || bytes.Contains(b, []byte("PRIVATE KEY")) {
				t.Errorf("%s holds the key's passphrase or a private key in the clear", p)
			}
		}
		return nil
	})
	if as != nil {
		checkOwnedBy(t, as, filepath.Join(home, "data"))
	}
}

// TestReadCommandsWithoutATerminal: list and show only read, so a script
// may run them without a terminal when the kernel keyring opens the vault;
// without keyring unlock they say how to run them, and every command that
// changes something still refuses.
func TestReadCommandsWithoutATerminal(t *testing.T) {
	_, env := initWithKernelKeyring(t)
	runSetup(t, env, func(r *ptyRun) { r.answer(t, "(not shown as you type): ", setupCanary) },
		"credential", "add", "--name", "receiver", "--host", "api.example.com", "--environment", "staging")
	piped := func(env []string, args ...string) (string, int) {
		cmd := exec.Command(yettBin, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader("")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := cmd.CombinedOutput()
		return string(out), exitCode(err)
	}
	for _, args := range [][]string{
		{"credential", "list"}, {"credential", "show", "receiver"}, {"operation", "list"}, {"accounts"},
		{"mcp-server", "list"}, {"ssh-host", "list"},
	} {
		out, code := piped(env, args...)
		if code != 0 || strings.Contains(out, "passphrase:") || strings.Contains(out, setupCanary) {
			t.Errorf("yett %s without a terminal: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		if args[0] == "credential" && !strings.Contains(out, "receiver") {
			t.Errorf("yett %s printed no credential:\n%s", strings.Join(args, " "), out)
		}
	}
	for _, args := range [][]string{
		{"credential", "remove", "receiver"}, {"credential", "rotate", "receiver"}, {"credential", "edit", "receiver", "--host", "evil.example"},
		{"ssh-host", "add", "--name", "x", "--address", "127.0.0.1", "--user", "u"}, {"ssh-host", "remove", "x"},
		{"ssh-host", "pin", "x", "--known-hosts"},
	} {
		if out, code := piped(env, args...); code != 2 || !strings.Contains(out, "from a person at a terminal") {
			t.Errorf("yett %s without a terminal: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	// The same read with keyring unlock off says what to do.
	plain := homeEnv(newHome(t))
	runSetup(t, plain, nil, "init")
	if out, code := piped(plain, "credential", "list"); code != 2 || !strings.Contains(out, "keyring unlock") ||
		!strings.Contains(out, "interactive terminal") {
		t.Errorf("credential list without a terminal or keyring: exit %d\n%s", code, out)
	}
}

// TestCredentialEditAndRotate: a credential added with who answers for it
// is under control at once; edit changes what it names and keeps the
// secret; rotate takes a new secret typed with echo off; both are recorded
// with "terminal" as their surface and neither secret is in the log.
func TestCredentialEditAndRotate(t *testing.T) {
	home := newHome(t)
	env := homeEnv(home)
	runSetup(t, env, nil, "init")
	runSetup(t, env, func(r *ptyRun) { r.answer(t, "(not shown as you type): ", setupCanary) },
		"credential", "add", "--name", "receiver", "--host", "api.example.com",
		"--owner", "alice", "--backup-revoker", "bob", "--environment", "staging")
	show := func() string {
		t.Helper()
		r := startPTY(t, env, yettBin, "credential", "show", "receiver")
		r.answer(t, "Yett vault passphrase: ", setupPassphrase)
		if code := r.wait(t); code != 0 {
			t.Fatalf("show: exit %d\n%s", code, r.screen.String())
		}
		return r.screen.String()
	}
	if out := show(); !strings.Contains(out, "under control (staging)") || !strings.Contains(out, "today") {
		t.Fatalf("a credential added with its owner, backup revoker and environment:\n%s", out)
	}
	runSetup(t, env, nil, "credential", "edit", "receiver", "--name", "receiver-v2", "--path", "/v2", "--approval", "per-call")
	const rotated = "CANARY-rotated-secret-55d0"
	runSetup(t, env, func(r *ptyRun) { r.answer(t, "New secret for \"receiver-v2\" (not shown as you type): ", rotated) },
		"credential", "rotate", "receiver-v2")
	r := startPTY(t, env, yettBin, "credential", "show", "receiver-v2")
	r.answer(t, "Yett vault passphrase: ", setupPassphrase)
	r.wait(t)
	out := r.screen.String()
	for _, want := range []string{"/v2", "per call", "api.example.com", "version  3", "under control (staging)"} {
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("show after the edit and the rotation lacks %q:\n%s", want, out)
		}
	}
	// Rotating to the same secret is refused, and says why.
	same := startPTY(t, env, yettBin, "credential", "rotate", "receiver-v2")
	same.answer(t, "Yett vault passphrase: ", setupPassphrase)
	same.answer(t, "(not shown as you type): ", rotated)
	if code := same.wait(t); code == 0 || !strings.Contains(same.screen.String(), "same as the current one") {
		t.Errorf("rotating to the same secret: exit %d\n%s", code, same.screen.String())
	}
	var changes []string
	for _, e := range auditEntries(t, home) {
		if e.Event.Type == audit.EventVaultChanged && e.Event.VaultChange != nil {
			changes = append(changes, string(e.Event.VaultChange.Change))
			if e.Event.Surface != originTerminal {
				t.Errorf("%s with surface %q", e.Event.VaultChange.Change, e.Event.Surface)
			}
		}
		if b, _ := json.Marshal(e.Event); bytes.Contains(b, []byte(rotated)) {
			t.Errorf("the rotated secret is in a %s entry", e.Event.Type)
		}
	}
	if got := strings.Join(changes, ","); got != "credential_added,credential_edited,secret_rotated" {
		t.Errorf("vault changes recorded: %s", got)
	}
}
