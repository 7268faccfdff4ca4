package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The lifecycle through the bound service: edit, rotate, overlap warnings,
// passphrase change, backup and restore. No answer, event or log line
// carries a secret or a passphrase.
func TestVaultServiceCredentialLifecycle(t *testing.T) {
	s, rec, logs := newService(t)
	if _, err := s.Create("correct horse battery", false); err != nil {
		t.Fatal(err)
	}
	c, err := s.AddCredential(NewCredentialForm{Name: "tracker", Secret: canary, Format: "bearer",
		Hosts: []string{"api.example.com"}, Approval: "session"})
	if err != nil {
		t.Fatal(err)
	}
	overlaps, err := s.CheckBindings([]string{"api.example.com"}, []string{"/v1/"}, "")
	if err != nil || len(overlaps) != 1 || overlaps[0].OtherName != "tracker" || overlaps[0].Winner != "candidate" ||
		overlaps[0].Example != "https://api.example.com/v1/" {
		t.Fatalf("overlaps %+v %v", overlaps, err)
	}
	if _, err := s.AddCredential(NewCredentialForm{Name: "tracker v1", Secret: canary + "-2", Format: "bearer",
		Hosts: []string{"api.example.com"}, PathPrefixes: []string{"/v1/"}, Approval: "per_call"}); err != nil {
		t.Fatal(err)
	}
	list, _ := s.ListCredentials()
	if len(list) != 2 || len(list[0].OverlapsWith) != 1 || list[0].OverlapsWith[0] != "tracker v1" {
		t.Fatalf("list with overlaps %+v", list)
	}

	edited, err := s.UpdateCredential(c.ID, c.Version, CredentialEditForm{Name: "tracker (read)", Format: "header",
		HeaderName: "X-Key", Template: "Key {secret}", Hosts: []string{"api.example.com"}, PathPrefixes: []string{"/read/"}, Approval: "per_call"})
	if err != nil || edited.Version != 2 || edited.Format != "header" {
		t.Fatalf("edit %+v %v", edited, err)
	}
	if _, err := s.UpdateCredential(c.ID, c.Version, CredentialEditForm{Name: "x", Format: "bearer", Hosts: []string{"a.example.com"}, Approval: "session"}); err == nil ||
		!strings.Contains(err.Error(), "changed since the form was opened") {
		t.Fatalf("a stale edit: %v", err)
	}
	rotated, err := s.RotateSecret(c.ID, edited.Version, canary+"-rotated")
	if err != nil || rotated.Version != 3 || rotated.SecretSetAt == rotated.CreatedAt && rotated.SecretSetAt == "" {
		t.Fatalf("rotate %+v %v", rotated, err)
	}
	if _, err := s.RotateSecret(c.ID, rotated.Version, canary+"-rotated"); err == nil || strings.Contains(err.Error(), canary) ||
		!strings.Contains(err.Error(), "same as the current one") {
		t.Fatalf("rotating to the same secret: %v", err)
	}

	if _, err := s.ChangePassphrase("not it at all", "a brand new passphrase"); err == nil || err.Error() != "Wrong passphrase." {
		t.Fatalf("wrong current passphrase: %v", err)
	}
	res, err := s.ChangePassphrase("correct horse battery", "a brand new passphrase")
	if err != nil || res.Status.State != "unlocked" || res.KeyringCleared {
		t.Fatalf("change passphrase %+v %v", res, err)
	}

	dir := t.TempDir()
	s.setDialogs(fileDialogs{
		save: func(_, name string) (string, error) { return filepath.Join(dir, name), nil },
		open: func(string) (string, error) {
			m, _ := filepath.Glob(filepath.Join(dir, "*"+backupExtension))
			return m[0], nil
		},
	})
	exp, err := s.ExportBackup("a brand new passphrase")
	if err != nil || !exp.Saved || exp.Size == 0 || !strings.HasSuffix(exp.Path, backupExtension) {
		t.Fatalf("export %+v %v", exp, err)
	}
	raw, _ := os.ReadFile(exp.Path)
	if strings.Contains(string(raw), canary) {
		t.Fatal("the backup holds the secret in the clear")
	}
	if err := s.RemoveCredential(c.ID); err != nil {
		t.Fatal(err)
	}
	choice, err := s.ChooseBackup()
	if err != nil || !choice.Chosen || choice.Path != exp.Path {
		t.Fatalf("choose %+v %v", choice, err)
	}
	if _, err := s.RestoreBackup(choice.Path, "correct horse battery"); err == nil || err.Error() != "Wrong passphrase." {
		t.Fatalf("restore with the old passphrase: %v", err)
	}
	st, err := s.RestoreBackup(choice.Path, "a brand new passphrase")
	if err != nil || st.State != "unlocked" {
		t.Fatalf("restore %+v %v", st, err)
	}
	list, _ = s.ListCredentials()
	if len(list) != 2 {
		t.Fatalf("after restore: %+v", list)
	}

	js, _ := json.Marshal(list)
	for _, where := range []string{string(js), rec.all(), logs.String()} {
		for _, secret := range []string{canary, "correct horse battery", "a brand new passphrase"} {
			if strings.Contains(where, secret) {
				t.Fatalf("%q leaked into %s", secret, where)
			}
		}
	}
}

func TestConnectInfo(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "My Apps", "yett")
	os.MkdirAll(filepath.Dir(cli), 0o700)
	os.WriteFile(cli, []byte("#!/bin/sh\n"), 0o700)
	s := newConnectService(cli, func() (bool, string) { return true, "" })
	s.goos = "linux"
	info := s.Info()
	if !info.CLIFound || !info.Listening || info.CLIPath != cli || len(info.Clients) != 5 {
		t.Fatalf("info %+v", info)
	}
	quoted := "'" + cli + "'"
	want := map[string]string{
		"claude-code": "claude mcp add --scope user yett -- " + quoted + " mcp",
		"codex":       "codex mcp add yett -- " + quoted + " mcp",
		"other":       quoted + " mcp",
		"vscode":      `code --add-mcp '{"args":["mcp"],"command":"` + cli + `","name":"yett","type":"stdio"}'`,
	}
	for _, c := range info.Clients {
		if w, ok := want[c.ID]; ok && c.Command != w {
			t.Errorf("%s: %q, want %q", c.ID, c.Command, w)
		}
		if !strings.Contains(c.Config, "mcp") || strings.Contains(c.Command, "/path/to") {
			t.Errorf("%s: config %q", c.ID, c.Config)
		}
	}
	if c := info.Clients[2]; c.ID != "codex" || !strings.Contains(c.Config, "\ntool_timeout_sec = 180\n") {
		t.Errorf("codex: its tool timeout must outlast an approval card (120 s): %q", c.Config)
	}
	if c := info.Clients[1]; !strings.HasPrefix(c.Command, "xdg-open 'cursor://anysphere.cursor-deeplink/mcp/install?") {
		t.Errorf("cursor: %q", c.Command)
	}
	s.goos = "windows"
	s.cliPath = `C:\Program Files\Yett\yett.exe`
	if got := s.Info().Clients[0].Command; got != `claude mcp add --scope user yett -- 'C:\Program Files\Yett\yett.exe' mcp` {
		t.Errorf("windows: %q", got)
	}
	missing := newConnectService(filepath.Join(dir, "nope"), nil)
	if missing.Info().CLIFound {
		t.Error("a missing CLI reported found")
	}
}
