package app

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/sshhosts"
	"github.com/yettdev/yett/backend/vault"
)

func newSSHServiceForTest(t *testing.T) (*SSHService, *vault.Vault, func() []string) {
	t.Helper()
	dir := t.TempDir()
	v, err := vault.Open(filepath.Join(dir, "vault"), vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	if err := v.Create(vault.Passphrase("correct horse battery staple"), false); err != nil {
		t.Fatal(err)
	}
	m, err := sshhosts.New(sshhosts.Config{Vault: v, DataDir: filepath.Join(dir, "data")})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []string
	events := &eventSink{}
	events.attach(func(name string, _ any) {
		mu.Lock()
		sent = append(sent, name)
		mu.Unlock()
	})
	s := newSSHService(m, v, events, slog.New(slog.DiscardHandler))
	t.Cleanup(s.close)
	return s, v, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string{}, sent...)
	}
}

// The UI's side of SSH hosts: an imported key goes in and never comes
// back out, in a view or an error; every change is pushed to the window.
func TestSSHServiceNeverReturnsThePrivateKey(t *testing.T) {
	s, _, sent := newSSHServiceForTest(t)
	pair, err := sshaction.GenerateEd25519("me@laptop")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Split(string(pair.PEM), "\n")[1]
	h, err := s.AddHost(SSHHostForm{Name: "web-1", Address: "192.0.2.1", Port: 22, User: "deploy", PrivateKey: string(pair.PEM),
		Settings: SSHSettingsForm{Rules: "exact: uptime", Owner: "ana"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Fields(h.PublicKey)[1] != strings.Fields(pair.Public)[1] || h.Settings.Approval != "per_call" || h.Settings.TimeoutSeconds == 0 {
		t.Fatalf("view %+v", h)
	}
	if _, err := s.AddHost(SSHHostForm{Name: "web-2", Address: "192.0.2.1", User: "deploy"}); err != nil {
		t.Fatal(err)
	}
	hosts, err := s.Hosts()
	if err != nil || len(hosts) != 2 {
		t.Fatalf("%d hosts, %v", len(hosts), err)
	}
	b, _ := json.Marshal(hosts)
	if strings.Contains(string(b), body) || strings.Contains(string(b), "PRIVATE KEY") {
		t.Fatal("a host view carries the private key")
	}
	const canary = "CANARY-not-a-key-4471"
	for _, form := range []SSHHostForm{
		{Name: "x", Address: "192.0.2.1", User: "u", PrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\n" + canary + "\n-----END OPENSSH PRIVATE KEY-----\n"},
		{Name: "x", Address: "192.0.2.1", User: "u", Settings: SSHSettingsForm{Rules: "prefix:\n" + canary}},
		{Name: "web-1", Address: "192.0.2.1", User: "u"},
	} {
		_, err := s.AddHost(form)
		if err == nil || strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "Details are in the Yett log") {
			t.Errorf("error %v: want a sentence for a person that does not quote the input", err)
		}
	}
	if _, err := s.PinPasted(h.ID, canary); err == nil || strings.Contains(err.Error(), canary) {
		t.Errorf("pasting junk: %v", err)
	}
	if _, err := s.TrustOnFirstUse("ssh_nope"); err == nil || !strings.Contains(err.Error(), "No such SSH host") {
		t.Errorf("an unknown host: %v", err)
	}
	if n := strings.Count(strings.Join(sent(), " "), EventSSHChanged); n != 2 {
		t.Errorf("%d %s events for two hosts added: %v", n, EventSSHChanged, sent())
	}
}
