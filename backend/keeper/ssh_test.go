package keeper

import (
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/sshhosts"
	"github.com/yettdev/yett/backend/vault"
)

// The hosts service runs in the keeper for both front ends: a host added
// and pinned through it is recorded once as the person's vault change and
// once as a pin with its fingerprint, and its recordings are sealed in the
// keeper's data directory.
func TestSSHHostsRecordInTheKeepersLog(t *testing.T) {
	dir := t.TempDir()
	v := openVault(t, dir)
	k, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v, Origin: "terminal", NoGateway: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	m := k.SSHHosts()
	if m == nil {
		t.Fatal("no hosts service")
	}
	h, err := m.Add(sshhosts.NewHost{Name: "web-1", Address: "192.0.2.7", Port: 22, User: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	const hostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
	h, err = m.PinPasted(h.ID, hostKey+"\n")
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.Create("call-1", h.ID)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("{\"version\":2}\n"))
	w.Close()
	if rec, err := m.Recording("call-1"); err != nil || !rec.Complete {
		t.Fatalf("recording: %v", err)
	}
	k.Close()
	v.Unlock(vault.Passphrase(pass))
	var got []string
	for _, e := range events(t, v, dir) {
		switch {
		case e.Type == audit.EventVaultChanged && e.VaultChange != nil && strings.HasPrefix(e.VaultChange.Change, "ssh_host"):
			if e.VaultChange.Name != "web-1" || e.Surface != "terminal" {
				t.Errorf("change %+v", e.VaultChange)
			}
			got = append(got, e.VaultChange.Change)
		case e.Type == audit.EventSSHHostKeyPinned:
			if e.SSH == nil || e.SSH.HostFingerprint != h.Pins[0].Fingerprint || e.Reason != audit.ReasonPasted || e.Surface != "terminal" {
				t.Errorf("pin %+v", e)
			}
			got = append(got, string(e.Type))
		}
	}
	if want := "ssh_host_added ssh_host_keys_pinned ssh_host_key_pinned"; strings.Join(got, " ") != want {
		t.Fatalf("recorded %q, want %q", strings.Join(got, " "), want)
	}
}
