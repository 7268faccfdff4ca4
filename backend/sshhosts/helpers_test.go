package sshhosts

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

const passphrase = "correct horse battery staple for tests"

type world struct {
	t      *testing.T
	v      *vault.Vault
	m      *Registry
	dir    string
	mu     sync.Mutex
	events []audit.Event
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	v, err := vault.Open(filepath.Join(dir, "vault"), vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	if err := v.Create(vault.Passphrase(passphrase), false); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, v: v, dir: dir}
	w.m, err = New(Config{Vault: v, DataDir: filepath.Join(dir, "data"), Record: func(e audit.Event) {
		w.mu.Lock()
		w.events = append(w.events, e)
		w.mu.Unlock()
	}, ConnectTimeout: 30 * time.Second, KnownHosts: filepath.Join(dir, "known_hosts")})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) pinEvents() []audit.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []audit.Event
	for _, e := range w.events {
		if e.Type == audit.EventSSHHostKeyPinned {
			out = append(out, e)
		}
	}
	return out
}

// privateBody is the base64 of a host's private key as the vault holds it.
func (w *world) privateBody(id string, version uint64) string {
	w.t.Helper()
	sec, err := w.v.SSHHosts().KeyOf(id, version)
	if err != nil {
		w.t.Fatal(err)
	}
	defer sec.Wipe()
	return strings.Split(string(sec.Bytes()), "\n")[1]
}
