//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/internal/testsupport/nonroot"
)

// The values of the files imported below: none may reach a terminal, the
// audit log or any file of the data directory in the clear.
const (
	importCanaryReceiver = "CANARY-import-receiver-61c2"
	importCanaryOther    = "CANARY-import-other-0d9e"
	importCanaryTaken    = "CANARY-import-taken-7a41"
	importCanaryScript   = "CANARY-import-script-b3f8"
	importCanaryGitHub   = "CANARY-import-github-2c57"
	importCanaryOverlap  = "CANARY-import-overlap-e19a"
)

var importCanaries = []string{importCanaryReceiver, importCanaryOther, importCanaryTaken, importCanaryScript, importCanaryGitHub, importCanaryOverlap}

// importFile is a file the person keeps, with its bytes and mtime as they
// were before any import, to prove the import left it as it was.
type importFile struct {
	path  string
	bytes []byte
	mtime time.Time
}

// writeImportFile writes content as a file of the person's (nil: the
// runner's) in dir, dated an hour ago so that a write would show.
func writeImportFile(t *testing.T, as *nonroot.User, dir, name, content string) importFile {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if as != nil {
		if err := os.Chown(p, as.UID, as.GID); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, past, past); err != nil {
		t.Fatal(err)
	}
	return importFile{path: p, bytes: []byte(content), mtime: past}
}

// unchanged: the file's bytes and mtime are as they were written.
func (f importFile) unchanged(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, f.bytes) || !fi.ModTime().Equal(f.mtime) {
		t.Errorf("%s changed: %d bytes (were %d), mtime %v (was %v)", f.path, len(b), len(f.bytes), fi.ModTime(), f.mtime)
	}
}

// TestCredentialImport is a person importing a .env file at a terminal:
// the list names every entry by number without a value; a choice of an
// entry that cannot be imported and of one that does not exist is refused
// and asked again; two entries are imported, one bound to the host it
// suggests, confirmed with Enter, the other to hosts and paths typed, one
// of which overlaps a stored credential (said, and confirmed); a third,
// whose name a stored credential has (in another case), is refused by
// name twice and skipped. The vault then holds both, bound as answered
// and under control, and an agent's call through yett serve carries the
// imported value. A scripted import (--host NAME=HOST) refuses a taken
// name and exits 1; one with --all binds a well-known variable to its
// suggested host and another to its --host and --path, and refuses one
// whose binding overlaps a stored credential's. The files are left byte
// for byte with their mtimes; no value reaches a terminal, the audit log
// or any file of the data directory; each credential added is recorded
// with "terminal" as its surface.
func TestCredentialImport(t *testing.T) { credentialImportAtTerminal(t, nil) }

// TestCredentialImportNonRoot is the same import for a person who is not
// root.
func TestCredentialImportNonRoot(t *testing.T) { credentialImportAtTerminal(t, nonroot.Person(t)) }

func credentialImportAtTerminal(t *testing.T, as *nonroot.User) {
	home, yett, files := newHome(t), yettBin, t.TempDir()
	if as != nil {
		home, files = as.Home, as.Home
		yett = as.Install(t, yettBin, "yett")
	}
	env := homeEnv(home)
	recvURL, recvLog := startReceiver(t)
	recvHost := strings.TrimPrefix(recvURL, "http://")
	var screens []string
	run := func(want int, do func(r *ptyRun), args ...string) string {
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
		code := r.wait(t)
		screens = append(screens, r.screen.String())
		if code != want {
			t.Fatalf("yett %s exited %d, want %d; the terminal shows:\n%s", strings.Join(args, " "), code, want, r.screen.String())
		}
		return r.screen.String()
	}
	run(0, nil, "init")
	run(0, func(r *ptyRun) { r.answer(t, "(not shown as you type): ", setupCanary) },
		"credential", "add", "--name", "taken_token", "--host", "api.taken.example")

	dotenv := writeImportFile(t, as, files, "old-box.env", "# the old deploy box\n"+
		"export RECEIVER_URL="+recvURL+"\n"+
		"RECEIVER_TOKEN="+importCanaryReceiver+"\n"+
		"OTHER_TOKEN='"+importCanaryOther+"'\n"+
		"EMPTY_ONE=\n"+
		"TAKEN_TOKEN="+importCanaryTaken+"\n")
	out := run(0, func(r *ptyRun) {
		r.expect(t, "holds .env lines: 5 entries, 4 of them can be imported. Values are never shown.")
		r.answer(t, "Import which? Numbers such as 1,3-4, or all (Enter imports none): ", "4")
		r.expect(t, "Entry 4 cannot be imported: the value is empty.")
		r.answer(t, "Import which?", "2-3,9")
		r.expect(t, "There is no entry 9: they are numbered 1 to 5.")
		r.answer(t, "Import which?", "2,3,5")
		r.answer(t, "[session]: ", "")
		r.answer(t, "  Owner: ", "alice")
		r.answer(t, "  Backup revoker, who can cut them off when the owner cannot: ", "bob")
		r.answer(t, "  Environment (development, staging or production): ", "staging")
		r.expect(t, "[2] RECEIVER_TOKEN: text, 27 characters")
		r.answer(t, "  Name [RECEIVER_TOKEN]: ", "")
		r.answer(t, "  Hosts it may be sent to ["+recvHost+"]: ", "")
		r.answer(t, "  Path prefixes [/]: ", "")
		r.expect(t, `Added "RECEIVER_TOKEN"`)
		r.expect(t, "[3] OTHER_TOKEN: text, 24 characters")
		r.answer(t, "  Name [OTHER_TOKEN]: ", "")
		r.answer(t, "  Hosts it may be sent to (Enter skips this entry): ", "api.other.example, api.taken.example")
		r.answer(t, "  Path prefixes [/]: ", "/v1 /v2")
		r.expect(t, `This credential overlaps "taken_token": a call to `)
		r.answer(t, "  Import it anyway? [y/N] ", "y")
		r.expect(t, `Added "OTHER_TOKEN"`)
		r.expect(t, `A credential named "TAKEN_TOKEN" already exists.`)
		r.answer(t, "  Name (Enter skips this entry): ", "receiver_TOKEN")
		r.answer(t, `A credential named "receiver_TOKEN" already exists: give this one another name.`, "")
	}, "credential", "import", dotenv.path)
	if os.Getenv("SHOWSCREEN") != "" {
		t.Log(out)
	}
	for _, want := range []string{
		"1  RECEIVER_URL", "url, " + strconv.Itoa(len(recvURL)) + " characters",
		"2  RECEIVER_TOKEN", recvHost,
		"4  EMPTY_ONE", "cannot be imported: the value is empty",
		"5  TAKEN_TOKEN", "none; a credential already has this name",
		"Added 2 credential(s)", "Not imported:", `a credential named "TAKEN_TOKEN" already exists`,
		"Delete " + dotenv.path + " once you no longer need it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the import's terminal lacks %q:\n%s", want, out)
		}
	}

	// The vault holds both, bound as answered, under control.
	list := run(0, nil, "credential", "list")
	for _, want := range []string{"RECEIVER_TOKEN", recvHost, "OTHER_TOKEN", "api.other.example,api.taken.example", "/v1,/v2"} {
		if !strings.Contains(list, want) {
			t.Errorf("credential list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "TAKEN_TOKEN") {
		t.Errorf("the skipped entry was added:\n%s", list)
	}
	if show := run(0, nil, "credential", "show", "OTHER_TOKEN"); !strings.Contains(show, "under control (staging)") {
		t.Errorf("an imported credential is not under control:\n%s", show)
	}

	// An agent's call carries the imported value.
	serve := startPTYAs(t, as, env, yett, "serve", "--approval-timeout", "30s")
	serve.answer(t, "Yett vault passphrase: ", setupPassphrase)
	serve.expect(t, "gateway listening")
	res := runAgent(t, as, env, yett, map[string]any{
		"method": "GET", "url": recvURL + "/imported-1", "headers": map[string]string{"X-Replay-Test-Id": "imported-1"},
	}, func() { serve.approveCard(t, 1) })
	if res.err != nil || !strings.Contains(res.text, `"status":200`) {
		t.Fatalf("the agent's call: %+v; the terminal shows:\n%s", res, serve.screen.String())
	}
	serve.answer(t, "[1] approved.", "quit")
	serve.expect(t, "yett serve: stopped")
	serve.wait(t)
	screens = append(screens, serve.screen.String(), res.text)
	evs := readEvents(t, recvLog)
	sum := sha256.Sum256([]byte("Bearer " + importCanaryReceiver))
	if len(evs) != 1 || evs[0]["request_id"] != "imported-1" || evs[0]["auth_marker"] != hex.EncodeToString(sum[:])[:12] {
		t.Fatalf("the receiver saw %v, want one call carrying the imported value", evs)
	}

	// Scripted: a taken name is refused and said so, the other entry
	// named is added, and nothing but the passphrase is asked.
	out = run(1, nil, "credential", "import", dotenv.path, "--host", "TAKEN_TOKEN=api.taken2.example",
		"--host", "RECEIVER_URL=api.url.example", "--approval", "writes")
	if !strings.Contains(out, `a credential named "TAKEN_TOKEN" already exists`) || !strings.Contains(out, "Added 1 credential(s)") ||
		!strings.Contains(out, "1 of the 2 entries chosen could not be imported") || strings.Contains(out, "Import which?") {
		t.Errorf("the scripted import of a taken name:\n%s", out)
	}
	// Scripted with --all: a well-known variable is bound to the host it
	// suggests, another to its --host and --path, and one whose binding
	// would take calls from a stored credential is not imported.
	script := writeImportFile(t, as, files, "script.env", "GITHUB_TOKEN="+importCanaryGitHub+"\nSCRIPT_TOKEN=\""+importCanaryScript+"\"\n"+
		"OVERLAP_TOKEN="+importCanaryOverlap+"\n")
	out = run(1, nil, "credential", "import", "--all", script.path, "--host", "SCRIPT_TOKEN=api.script.example",
		"--path", "SCRIPT_TOKEN=/v3", "--host", "OVERLAP_TOKEN=api.taken.example", "--owner", "alice", "--backup-revoker", "bob", "--environment", "development")
	if os.Getenv("SHOWSCREEN") != "" {
		t.Log(out)
	}
	if !strings.Contains(out, "Added 2 credential(s)") || !strings.Contains(out, `3  OVERLAP_TOKEN  it overlaps "OTHER_TOKEN": a call to https://api.taken.example/v1 would use "OTHER_TOKEN"`) ||
		!strings.Contains(out, "1 of the 3 entries chosen could not be imported") {
		t.Errorf("the scripted import with --all:\n%s", out)
	}
	list = run(0, nil, "credential", "list")
	for _, want := range []string{"GITHUB_TOKEN", "api.github.com", "SCRIPT_TOKEN", "api.script.example", "/v3", "RECEIVER_URL", "api.url.example"} {
		if !strings.Contains(list, want) {
			t.Errorf("credential list after the scripted imports lacks %q:\n%s", want, list)
		}
	}

	dotenv.unchanged(t)
	script.unchanged(t)
	var added []string
	for _, e := range auditEntries(t, home) {
		if e.Event.Type == audit.EventVaultChanged && e.Event.VaultChange != nil && e.Event.VaultChange.Change == "credential_added" {
			added = append(added, e.Event.VaultChange.Name)
			if e.Event.Surface != originTerminal {
				t.Errorf("%s added with surface %q", e.Event.VaultChange.Name, e.Event.Surface)
			}
		}
		b, _ := json.Marshal(e.Event)
		for _, c := range importCanaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("a %s entry holds an imported value", e.Event.Type)
			}
		}
	}
	if got := strings.Join(added, ","); got != "taken_token,RECEIVER_TOKEN,OTHER_TOKEN,RECEIVER_URL,GITHUB_TOKEN,SCRIPT_TOKEN" {
		t.Errorf("credentials added, as the audit log records them: %s", got)
	}
	noImportedValue(t, home, screens)
	if as != nil {
		checkOwnedBy(t, as, filepath.Join(home, "data"))
	}
}

// noImportedValue: no imported value is on any terminal or in any file of
// the data directory (the audit log among them) in the clear.
func noImportedValue(t *testing.T, home string, screens []string) {
	t.Helper()
	for _, s := range screens {
		for _, c := range importCanaries {
			if strings.Contains(s, c) {
				t.Errorf("an imported value (%.20s...) is on a terminal:\n%s", c, s)
			}
		}
	}
	files := 0
	filepath.Walk(filepath.Join(home, "data"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		files++
		b, _ := os.ReadFile(p)
		for _, c := range importCanaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s holds an imported value in the clear", p)
			}
		}
		return nil
	})
	if files == 0 {
		t.Error("the data directory holds no file, so the check above proves nothing")
	}
}

// TestCredentialImportRefuses: an encrypted Bitwarden export is refused
// with what to export instead, and an entry --host names that the file
// does not hold is refused as a usage error, both before the passphrase is
// asked; three wrong passphrases leave the vault locked. Nothing is added,
// no value is shown and the files are left as they were. (Without a
// terminal: TestSetupRefusesWithoutATerminal.)
func TestCredentialImportRefuses(t *testing.T) {
	home := newHome(t)
	env := homeEnv(home)
	runSetup(t, env, nil, "init")
	files := t.TempDir()
	var screens []string
	refused := func(want int, do func(r *ptyRun), args ...string) string {
		t.Helper()
		r := startPTY(t, env, yettBin, args...)
		if do != nil {
			do(r)
		}
		code := r.wait(t)
		screens = append(screens, r.screen.String())
		if code != want {
			t.Fatalf("yett %s exited %d, want %d; the terminal shows:\n%s", strings.Join(args, " "), code, want, r.screen.String())
		}
		return r.screen.String()
	}

	encrypted := writeImportFile(t, nil, files, "bitwarden_encrypted_export.json", `{
  "encrypted": true,
  "passwordProtected": true,
  "salt": "`+importCanaryTaken+`",
  "kdfType": 0,
  "kdfIterations": 600000,
  "encKeyValidation_DO_NOT_EDIT": "2.`+importCanaryOther+`|abc|def",
  "data": "2.`+importCanaryScript+`|abc|def"
}
`)
	out := refused(1, nil, "credential", "import", encrypted.path)
	if !strings.Contains(out, "it is an encrypted Bitwarden export, which Yett cannot open: export again choosing the .json or .csv file format") ||
		strings.Contains(out, "passphrase:") {
		t.Errorf("an encrypted Bitwarden export:\n%s", out)
	}

	dotenv := writeImportFile(t, nil, files, "a.env", "RECEIVER_TOKEN="+importCanaryReceiver+"\n")
	out = refused(2, nil, "credential", "import", dotenv.path, "--host", "RECEIVER_TOKN=api.example.com")
	if !strings.Contains(out, `--host names "RECEIVER_TOKN", which is no entry of `+dotenv.path) || strings.Contains(out, "passphrase:") {
		t.Errorf("--host naming no entry:\n%s", out)
	}

	out = refused(1, func(r *ptyRun) {
		for i := 0; i < 3; i++ {
			r.answer(t, "Yett vault passphrase: ", "not the passphrase")
		}
	}, "credential", "import", dotenv.path)
	if !strings.Contains(out, "the vault stayed locked") || strings.Contains(out, "RECEIVER_TOKEN") {
		t.Errorf("three wrong passphrases:\n%s", out)
	}

	time.Sleep(2 * time.Second) // the vault's throttle after three wrong passphrases: 1 s
	if list := runSetup(t, env, nil, "credential", "list"); !strings.Contains(list, "No credentials.") {
		t.Errorf("a refused import added something:\n%s", list)
	}
	encrypted.unchanged(t)
	dotenv.unchanged(t)
	noImportedValue(t, home, screens)
}
