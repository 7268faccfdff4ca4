package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sshKeyCanary = "-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY-ssh-5d2e8b71-never-leak\n-----END OPENSSH PRIVATE KEY-----\n"

func sampleHost(name string) NewSSHHost {
	return NewSSHHost{
		Name: name, Address: "web1.example.com", Port: 2222, User: "deploy",
		PrivateKey: NewSecret([]byte(sshKeyCanary)), PublicKey: "ssh-ed25519 AAAAC3Nz yett:" + name, KeyFingerprint: "SHA256:abc",
		SSHHostSettings: SSHHostSettings{Rules: []string{"exact: uptime"}, Owner: "ana@example.com"},
	}
}

func TestSSHHostLifecycle(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	h, err := v.SSHHosts().Add(sampleHost("web-1"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Approval != ApprovalPerCall || h.Timeout != DefaultSSHHostTimeout || h.Version != 1 || len(h.HostKeys) != 0 {
		t.Fatalf("defaults: %+v", h)
	}
	if _, err := v.SSHHosts().Add(sampleHost("WEB-1")); !errors.Is(err, ErrSSHHostExists) {
		t.Fatalf("a second host of the same name (other case): %v", err)
	}
	got, err := v.SSHHosts().ByName("Web-1")
	if err != nil || got.ID != h.ID {
		t.Fatalf("by name: %+v %v", got, err)
	}
	if _, err := v.SSHHosts().ByName("web-2"); !errors.Is(err, ErrNoSSHHost) {
		t.Fatalf("unknown name: %v", err)
	}

	k, err := v.SSHHosts().KeyOf(h.ID, h.Version)
	if err != nil || string(k.Bytes()) != sshKeyCanary {
		t.Fatalf("key: %v", err)
	}
	k.Wipe()

	pinned, err := v.SSHHosts().SetKeys(h.ID, h.Version, []string{"ssh-ed25519 AAAAhost"})
	if err != nil || pinned.Version != 2 || pinned.HostKeys[0] != "ssh-ed25519 AAAAhost" {
		t.Fatalf("pin: %+v %v", pinned, err)
	}
	// Trust on first use commits only for the version it probed.
	if _, err := v.SSHHosts().SetKeys(h.ID, h.Version, []string{"ssh-ed25519 AAAAother"}); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("a stale pin was committed: %v", err)
	}
	// The key is lent for the version an approval covered, never another.
	if _, err := v.SSHHosts().KeyOf(h.ID, h.Version); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("key of an old version: %v", err)
	}
	alerted, err := v.SSHHosts().Alert(h.ID, HostKeyAlert{Presented: "ssh-ed25519 AAAAevil", Fingerprint: "SHA256:evil", At: time.Now()})
	if err != nil || alerted.HostKeyAlert == nil || alerted.HostKeyAlert.Fingerprint != "SHA256:evil" {
		t.Fatalf("alert: %+v %v", alerted, err)
	}
	updated, err := v.SSHHosts().Update(h.ID, SSHHostSettings{Approval: ApprovalSession, Timeout: time.Minute, Record: true, BackupRevoker: "bo"})
	if err != nil || updated.Approval != ApprovalSession || !updated.Record || updated.HostKeyAlert == nil || len(updated.HostKeys) != 1 {
		t.Fatalf("update: %+v %v", updated, err)
	}
	cleared, err := v.SSHHosts().SetKeys(h.ID, 0, []string{"ssh-ed25519 AAAAnew"})
	if err != nil || cleared.HostKeyAlert != nil {
		t.Fatalf("a new pin clears the alert: %+v %v", cleared, err)
	}

	// Everything survives a lock, and the unlock verifies it.
	if err := v.Lock("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.SSHHosts().List(); !errors.Is(err, ErrLocked) {
		t.Fatalf("listed while locked: %v", err)
	}
	if _, err := v.SSHHosts().KeyOf(h.ID, cleared.Version); !errors.Is(err, ErrLocked) {
		t.Fatalf("key while locked: %v", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	list, err := v.SSHHosts().List()
	if err != nil || len(list) != 1 || list[0].Version != cleared.Version || list[0].HostKeys[0] != "ssh-ed25519 AAAAnew" || !list[0].Record {
		t.Fatalf("after unlock: %+v %v", list, err)
	}
	if err := v.SSHHosts().Remove(h.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.SSHHosts().KeyOf(h.ID, cleared.Version); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("key of a removed host: %v", err)
	}
}

func TestSSHHostValidation(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	for name, edit := range map[string]func(*NewSSHHost){
		"name with space":  func(h *NewSSHHost) { h.Name = "web 1" },
		"name dash first":  func(h *NewSSHHost) { h.Name = "-web" },
		"address with at":  func(h *NewSSHHost) { h.Address = "root@web1" },
		"port":             func(h *NewSSHHost) { h.Port = 70000 },
		"user option":      func(h *NewSSHHost) { h.User = "-oProxyCommand=x" },
		"no key":           func(h *NewSSHHost) { h.PrivateKey = Secret{} },
		"timeout":          func(h *NewSSHHost) { h.Timeout = 2 * time.Hour },
		"rule with a line": func(h *NewSSHHost) { h.Rules = []string{"exact: a\nb"} },
		"bad pin":          func(h *NewSSHHost) { h.HostKeys = []string{"nospace"} },
		"approval":         func(h *NewSSHHost) { h.Approval = "never" },
	} {
		h := sampleHost("ok")
		edit(&h)
		if _, err := v.SSHHosts().Add(h); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		} else if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: the error quotes the key", name)
		}
	}
}

// The private key reaches no view, no JSON, no format verb and no file in
// the clear.
func TestSSHHostKeyCanary(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	nh := sampleHost("canary")
	h, err := v.SSHHosts().Add(nh)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := v.SSHHosts().List()
	js, _ := json.Marshal(list)
	nhJSON, _ := json.Marshal(nh)
	printed := fmt.Sprintf("%v %+v %#v", nh, h, list)
	for what, text := range map[string]string{"list": string(js), "new host JSON": string(nhJSON), "fmt": printed} {
		if strings.Contains(text, "CANARY-ssh") {
			t.Errorf("%s shows the private key", what)
		}
	}
	v.Lock("t")
	v.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("CANARY-ssh")) {
			t.Errorf("%s holds the key in the clear", filepath.Base(f))
		}
	}
}

// A host record altered in the file is damage at the next unlock, like any
// record: a pin or a rule cannot be edited behind the vault's back.
func TestSSHHostTamperIsDamage(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	h, err := v.SSHHosts().Add(sampleHost("web-1"))
	if err != nil {
		t.Fatal(err)
	}
	v.Lock("t")
	v.Close()
	tamper(t, dir, xorBytes("vault_records", "sealed", "id = ?", []int{32}, h.ID))
	v2 := openVault(t, dir, testOptions(newFakeClock()))
	if err := v2.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) {
		t.Fatalf("unlock of an altered host record: %v", err)
	}
}
