package kernelkeyring

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/backend/vault"
)

// throwaway is a keyring under a name of its own, unlinked at cleanup.
func throwaway(t *testing.T) Keyring {
	b := make([]byte, 6)
	rand.Read(b)
	k := Keyring{Name: "yett-test-" + hex.EncodeToString(b)}
	t.Cleanup(func() {
		user, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
		if err != nil {
			return
		}
		if id, err := unix.KeyctlSearch(user, "keyring", k.Name, 0); err == nil {
			unix.KeyctlInt(unix.KEYCTL_UNLINK, id, user, 0, 0)
		}
	})
	return k
}

func TestStoreRoundTrip(t *testing.T) {
	ks, err := throwaway(t).OpenKeyring()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.Get("vault-x"); !errors.Is(err, vault.ErrKeyNotFound) {
		t.Fatalf("missing item: %v", err)
	}
	if err := ks.Set("vault-x", "label", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := ks.Set("vault-x", "label", []byte("second value")); err != nil {
		t.Fatal(err)
	}
	if got, err := ks.Get("vault-x"); err != nil || string(got) != "second value" {
		t.Fatalf("get: %q %v", got, err)
	}
	if err := ks.Remove("vault-x"); err != nil {
		t.Fatal(err)
	}
	if err := ks.Remove("vault-x"); err != nil {
		t.Fatalf("removing a missing item: %v", err)
	}
	if _, err := ks.Get("vault-x"); !errors.Is(err, vault.ErrKeyNotFound) {
		t.Fatalf("after remove: %v", err)
	}
}

// TestVaultUnlocksWithIt: a vault created with keyring unlock on the
// kernel keyring opens again without its passphrase, from another Open.
func TestVaultUnlocksWithIt(t *testing.T) {
	k := throwaway(t)
	dir := t.TempDir()
	opts := vault.Options{Keyring: k, KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}}
	v, err := vault.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Create(vault.Passphrase("kernel keyring test passphrase"), true); err != nil {
		t.Fatal(err)
	}
	v.Close()
	v, err = vault.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.UnlockWithKeyring(); err != nil {
		t.Fatal(err)
	}
	if v.Status().State != vault.StateUnlocked {
		t.Fatalf("state %s", v.Status().State)
	}
}
