package keeper

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/sshhosts"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/sshdtest"
)

// A host that asks to be recorded is recorded through the keeper's hosts
// service: a real agent's ssh.exec through the real shim and the keeper's
// gateway against a real sshd leaves one sealed recording, complete, that
// reads back with what the command printed, and nothing of it is in the
// clear in the data directory.
func TestSSHSessionRecordedSealedThroughTheKeeper(t *testing.T) {
	base, err := os.MkdirTemp("", "yk") // short: the socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir, runDir := filepath.Join(base, "data"), filepath.Join(base, "run")
	v := openVault(t, dir)
	if err := v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	k, err := Open(Config{DataDir: dir, RuntimeDir: runDir, Vault: v, ShimPath: buildYett(t), ApprovalTimeout: time.Minute,
		// The person approves per-call cards in the window, verified.
		Presence: &testPresence{present: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	srv := sshdtest.Start(t)
	m := k.SSHHosts()
	h, err := m.Add(sshhosts.NewHost{Name: "web-1", Address: srv.Host, Port: srv.Port, User: srv.User,
		Settings: sshhosts.Settings{Approval: vault.ApprovalSession, Record: true, Owner: "ana", BackupRevoker: "luis"}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Authorize(t, h.PublicKey)
	if _, err := m.PinPasted(h.ID, srv.HostKey); err != nil {
		t.Fatal(err)
	}

	const marker = "recorded-marker-5521"
	a := startAgent(t, runDir)
	a.ssh("web-1", marker)
	broker := k.State().Broker
	deadline := time.Now().Add(60 * time.Second)
	for len(broker.Pending()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no session card")
		}
		time.Sleep(20 * time.Millisecond)
	}
	card := broker.Pending()[0]
	if card.Command != "echo "+marker {
		t.Fatalf("the card names %q", card.Command)
	}
	if err := broker.Answer(card.ID, true, "test"); err != nil {
		t.Fatal(err)
	}
	r := a.reply()
	if r.Err != "" || r.IsError || !strings.Contains(r.Text, marker) {
		t.Fatalf("ssh.exec: %+v", r)
	}
	recs, err := m.Recordings(h.ID)
	if err != nil || len(recs) != 1 {
		t.Fatalf("recordings %+v %v", recs, err)
	}
	rec, err := m.Recording(recs[0].ID)
	if err != nil || !rec.Complete || !strings.Contains(string(rec.Cast), marker) || !strings.Contains(string(rec.Cast), `"version":2`) {
		t.Fatalf("recording %+v %v", rec, err)
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), marker) {
				t.Errorf("what the command printed is in the clear in %s", p)
			}
		}
		return nil
	})
}
