//go:build unix

package sshhosts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/sshdtest"
)

func (w *world) addFor(srv *sshdtest.Server, name string) HostView {
	w.t.Helper()
	h, err := w.m.Add(NewHost{Name: name, Address: srv.Host, Port: srv.Port, User: srv.User,
		Settings: Settings{Approval: vault.ApprovalPerCall, Owner: "ana", BackupRevoker: "luis"}})
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

func TestAddGeneratesAKeyAndShowsOnlyItsPublicHalf(t *testing.T) {
	w := newWorld(t)
	h, err := w.m.Add(NewHost{Name: "web-1", Address: "192.0.2.10", Port: 22, User: "deploy",
		Settings: Settings{Rules: "exact: uptime\nprefix: systemctl status \n", Timeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.PublicKey, "ssh-ed25519 ") || !strings.HasSuffix(h.PublicKey, " yett:web-1") {
		t.Fatalf("public key %q", h.PublicKey)
	}
	if !strings.HasPrefix(h.KeyFingerprint, "SHA256:") {
		t.Fatalf("fingerprint %q", h.KeyFingerprint)
	}
	// The host's own problem only: who answers for it is the inventory's
	// verdict (app's TestHostsViewShowsTheInventorysVerdict).
	if len(h.Problems) != 1 || !strings.HasPrefix(h.Problems[0], "no pinned host key") {
		t.Fatalf("a host with no pin, owner or backup revoker: problems=%q", h.Problems)
	}
	// The key in the vault is the private half of the public key shown.
	sec, err := w.v.SSHHosts().KeyOf(h.ID, h.Version)
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := sshaction.PublicOf(sec.Bytes())
	sec.Wipe()
	if err != nil || strings.Fields(pub)[1] != strings.Fields(h.PublicKey)[1] {
		t.Fatalf("the vault's key is not the one shown: %v", err)
	}
	body := w.privateBody(h.ID, h.Version)
	for _, get := range []func() (any, error){
		func() (any, error) { return w.m.Hosts() },
		func() (any, error) { return w.m.Host(h.ID) },
	} {
		v, err := get()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		if bytes.Contains(b, []byte(body)) || bytes.Contains(b, []byte("PRIVATE KEY")) {
			t.Fatal("a view carries the private key")
		}
	}
	if h.Rules != "exact: uptime\nprefix: systemctl status\n" {
		t.Fatalf("rules %q", h.Rules)
	}
	if _, err := w.m.Add(NewHost{Name: "bad", Address: "192.0.2.10", Port: 22, User: "x", Settings: Settings{Rules: "uptime\nprefix:\n"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad rules: %v", err)
	}
	if _, err := w.m.Add(NewHost{Name: "bad", Address: "-oProxyCommand=x", Port: 22, User: "x"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad address: %v", err)
	}
}

func TestImportPassphraseProtectedKey(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-a", "16", "-N", "open sesame", "-C", "me@laptop", "-f", keyPath).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pem, _ := os.ReadFile(keyPath)
	pubLine, _ := os.ReadFile(keyPath + ".pub")
	add := func(pass string) (HostView, error) {
		return w.m.Add(NewHost{Name: "db", Address: "db.internal", Port: 2222, User: "ops",
			PrivateKey: bytes.Clone(pem), Passphrase: []byte(pass)})
	}
	if _, err := add(""); !errors.Is(err, sshaction.ErrPassphraseNeeded) {
		t.Fatalf("without the passphrase: %v", err)
	}
	if _, err := add("wrong"); !errors.Is(err, sshaction.ErrWrongPassphrase) {
		t.Fatalf("with a wrong passphrase: %v", err)
	}
	h, err := add("open sesame")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Fields(h.PublicKey)[1] != strings.Fields(string(pubLine))[1] {
		t.Fatalf("imported public key %q, want %q", h.PublicKey, pubLine)
	}
	if _, err := w.m.Add(NewHost{Name: "junk", Address: "db.internal", Port: 22, User: "ops", PrivateKey: []byte("not a key")}); !errors.Is(err, sshaction.ErrNotAKey) {
		t.Fatalf("junk: %v", err)
	}
}

func TestTrustOnFirstUsePinsOnlyAfterAuthentication(t *testing.T) {
	w := newWorld(t)
	srv := sshdtest.Start(t)
	h := w.addFor(srv, "web-1")

	// Yett's key is not in authorized_keys yet: authentication fails and
	// nothing is pinned.
	_, err := w.m.TrustOnFirstUse(context.Background(), h.ID)
	if !errors.Is(err, sshaction.ErrAuth) {
		t.Fatalf("before authorizing the key: %v", err)
	}
	if got, _ := w.m.Host(h.ID); len(got.Pins) != 0 {
		t.Fatalf("a failed authentication pinned %v", got.Pins)
	}
	if n := len(w.pinEvents()); n != 0 {
		t.Fatalf("%d pin events after a failed authentication", n)
	}

	srv.Authorize(t, h.PublicKey)
	got, err := w.m.TrustOnFirstUse(context.Background(), h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pins) != 1 || got.Pins[0].Key != srv.HostKey {
		t.Fatalf("pinned %+v, want the server's %s", got.Pins, srv.HostKey)
	}
	if len(got.Problems) != 0 {
		t.Fatalf("a pinned host: problems=%q", got.Problems)
	}
	ev := w.pinEvents()
	if len(ev) != 1 || ev[0].Reason != audit.ReasonTrustOnFirstUse || ev[0].SSH == nil ||
		ev[0].SSH.HostFingerprint != got.Pins[0].Fingerprint || ev[0].SSH.Host != "web-1" {
		t.Fatalf("pin events %+v", ev)
	}
	if _, err := w.m.TrustOnFirstUse(context.Background(), h.ID); !errors.Is(err, ErrAlreadyPinned) {
		t.Fatalf("a second trust on first use: %v", err)
	}
	if strings.Contains(srv.Log(), w.privateBody(h.ID, got.Version)) {
		t.Fatal("the private key reached the server's log")
	}
}

func TestPinFromKnownHostsAndPaste(t *testing.T) {
	w := newWorld(t)
	srv := sshdtest.Start(t)
	h := w.addFor(srv, "web-1")
	if _, _, err := w.m.PinFromKnownHosts(h.ID); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no known_hosts file: %v", err)
	}
	kh := "other.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n" +
		"[" + srv.Host + "]:" + strconv.Itoa(srv.Port) + " " + srv.HostKey + "\n"
	if err := os.WriteFile(filepath.Join(w.dir, "known_hosts"), []byte(kh), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, err := w.m.PinFromKnownHosts(h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pins) != 1 || got.Pins[0].Key != srv.HostKey {
		t.Fatalf("pins %+v", got.Pins)
	}
	if _, err := w.m.PinPasted(h.ID, "not a key at all"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("pasting junk: %v", err)
	}
	got, err = w.m.PinPasted(h.ID, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pins) != 1 || got.Pins[0].Key == srv.HostKey {
		t.Fatalf("pasting replaces the pins: %+v", got.Pins)
	}
	ev := w.pinEvents()
	if len(ev) != 2 || ev[0].Reason != audit.ReasonKnownHosts || ev[1].Reason != audit.ReasonPasted {
		t.Fatalf("pin events %+v", ev)
	}
}

// Issue 18, item 8: a host approved once per session that has prefix rules
// says so: within the session, every command such a rule allows runs with
// no card.
func TestSessionHostWithPrefixRulesIsFlagged(t *testing.T) {
	for _, c := range []struct {
		approval vault.Approval
		rules    string
		flagged  bool
	}{
		{vault.ApprovalSession, "prefix: ls\n", true},
		{vault.ApprovalSession, "prefix+options: df\n", true},
		{vault.ApprovalSession, "exact: uptime\n", false},
		{vault.ApprovalPerCall, "prefix: ls\n", false},
	} {
		v := viewOf(vault.SSHHostView{Name: "h", Approval: c.approval, Rules: strings.Split(strings.TrimSpace(c.rules), "\n")})
		got := strings.Contains(strings.Join(v.Problems, "\n"), "with prefix rules")
		if got != c.flagged {
			t.Errorf("%s with %q: flagged %v, want %v (%q)", c.approval, c.rules, got, c.flagged, v.Problems)
		}
	}
}
