package vault

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// The real backends are tested in package oskeyring (keyctl and GNOME
// Keyring). These tests cover the vault's side with an in-memory store.

type memKeyring struct {
	mu    sync.Mutex
	items map[string][]byte
}

func (m *memKeyring) OpenKeyring() (KeyStore, error) { return m, nil }

func (m *memKeyring) Get(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.items[name]
	if !ok {
		return nil, ErrKeyNotFound
	}
	return append([]byte(nil), b...), nil
}

func (m *memKeyring) Set(name, _ string, secret []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = map[string][]byte{}
	}
	m.items[name] = append([]byte(nil), secret...)
	return nil
}

func (m *memKeyring) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, name)
	return nil
}

type failingKeyring struct{}

func (failingKeyring) OpenKeyring() (KeyStore, error) {
	return nil, fmt.Errorf("secret-service: no session bus")
}

func TestKeyringUnavailable(t *testing.T) {
	opts := testOptions(newFakeClock())
	opts.Keyring = failingKeyring{}
	v := openVault(t, t.TempDir(), opts)
	if err := v.Create(pass(testPass), true); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("create with an unavailable keyring: %v", err)
	}
	if s := v.Status(); s.State != StateUninitialised || !strings.Contains(s.KeyringNote, "no session bus") {
		t.Fatalf("status %+v", s)
	}
	if err := v.Create(pass(testPass), false); err != nil {
		t.Fatal(err)
	}
	if err := v.EnableKeyring(true); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("enable: %v", err)
	}
	v.Lock("t")
	if err := v.UnlockWithKeyring(); !errors.Is(err, ErrKeyringNotEnabled) {
		t.Fatalf("unlock: %v", err)
	}
}

// A vault whose keyring unlock was on, opened where the keyring is off or
// broken, or whose item vanished: clear errors, and the passphrase works.
func TestKeyringFallbackToPassphrase(t *testing.T) {
	mem := &memKeyring{}
	on := testOptions(newFakeClock())
	on.Keyring = mem
	dir := t.TempDir()
	v := openVault(t, dir, on)
	if err := v.Create(pass(testPass), true); err != nil {
		t.Fatal(err)
	}
	v.Close()

	for name, opener := range map[string]KeyringOpener{"off": nil, "broken": failingKeyring{}} {
		o := testOptions(newFakeClock())
		o.Keyring = opener
		v := openVault(t, dir, o)
		if !v.Status().KeyringEnabled {
			t.Fatalf("%s: keyring unlock should still be recorded as on", name)
		}
		if err := v.UnlockWithKeyring(); !errors.Is(err, ErrKeyringUnavailable) {
			t.Fatalf("%s: %v", name, err)
		}
		if err := v.Unlock(pass(testPass)); err != nil {
			t.Fatal(err)
		}
		v.Close()
	}

	mem.items = nil
	v = openVault(t, dir, on)
	epoch := v.Epoch()
	if err := v.UnlockWithKeyring(); !errors.Is(err, ErrKeyringKeyMissing) {
		t.Fatalf("vanished item: %v", err)
	}
	if v.Epoch() <= epoch {
		t.Fatal("losing the keyring key did not advance the epoch")
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
}
