package vault

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/99designs/keyring"
	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"
)

func uniqueName(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// keyctlKeyring is the kernel keyring backend under a throwaway name in
// the user keyring; the named keyring is unlinked at cleanup.
func keyctlKeyring(t *testing.T) OSKeyring {
	t.Helper()
	o := OSKeyring{Backends: []keyring.BackendType{keyring.KeyCtlBackend}, ServiceName: uniqueName("yett-test-"), KeyCtlScope: "user"}
	t.Cleanup(func() {
		user, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
		if err != nil {
			return
		}
		if id, err := unix.KeyctlSearch(user, "keyring", o.ServiceName, 0); err == nil {
			unix.KeyctlInt(unix.KEYCTL_UNLINK, id, user, 0, 0)
		}
	})
	return o
}

// startSecretService starts a private D-Bus session bus and a
// gnome-keyring-daemon on it with an unlocked login keyring, and returns
// the bus address once the login collection exists.
func startSecretService(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		t.Fatalf("dbus-daemon (Debian package dbus): %v", err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the bus address: %v", err)
	}
	addr = strings.TrimSpace(addr)
	runtime := filepath.Join(home, "run")
	os.Mkdir(runtime, 0o700)
	daemon := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	daemon.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+addr, "HOME="+home,
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_RUNTIME_DIR="+runtime)
	daemon.Stdin = strings.NewReader("test keyring password")
	if err := daemon.Start(); err != nil {
		t.Fatalf("gnome-keyring-daemon (Debian package gnome-keyring): %v", err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	// The daemon takes a moment to claim org.freedesktop.secrets and to
	// create the unlocked login collection.
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		v, err := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
			GetProperty("org.freedesktop.Secret.Service.Collections")
		if err == nil && strings.Contains(fmt.Sprint(v.Value()), "/collection/login") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Secret Service did not come up: %v %v", err, v)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return addr
}

const secretServiceChildEnv = "YETT_VAULT_SECRET_SERVICE_CHILD"

func TestKeyringKeyctl(t *testing.T) {
	testKeyringUnlock(t, keyctlKeyring(t))
}

// TestKeyringSecretService runs the same test against GNOME Keyring. The
// keyring package connects to the session bus once, at init, so the test
// runs in a child process started with the private bus in its environment.
func TestKeyringSecretService(t *testing.T) {
	if os.Getenv(secretServiceChildEnv) != "" {
		testKeyringUnlock(t, OSKeyring{Backends: []keyring.BackendType{keyring.SecretServiceBackend}, ServiceName: uniqueName("yett-test-")})
		return
	}
	addr := startSecretService(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestKeyringSecretService$", "-test.v")
	cmd.Env = append(os.Environ(), secretServiceChildEnv+"=1", "DBUS_SESSION_BUS_ADDRESS="+addr)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestKeyringSecretService") {
		t.Fatalf("child test against gnome-keyring failed: %v\n%s", err, out)
	}
}

func testKeyringUnlock(t *testing.T, kr OSKeyring) {
	opts := testOptions(newFakeClock())
	opts.Keyring = kr
	dir := t.TempDir()
	v := openVault(t, dir, opts)
	if err := v.Create(pass(testPass), true); err != nil {
		t.Fatal(err)
	}
	if s := v.Status(); !s.KeyringEnabled || s.KeyringNote != "" {
		t.Fatalf("status after create with keyring: %+v", s)
	}
	if _, err := v.AddCredential(sampleCredential("k", "CANARY-keyring")); err != nil {
		t.Fatal(err)
	}
	v.Close()

	// A new Vault (as after a restart) unlocks from the keyring alone.
	v = openVault(t, dir, opts)
	if err := v.UnlockWithKeyring(); err != nil {
		t.Fatalf("UnlockWithKeyring: %v", err)
	}
	if l, _ := v.ListCredentials(); len(l) != 1 {
		t.Fatalf("credentials after keyring unlock: %v", l)
	}
	v.Lock("t")

	// The item disappears: a clear error, a new epoch, passphrase still works.
	ring, err := kr.OpenKeyring()
	if err != nil {
		t.Fatal(err)
	}
	item := keyringItemName(v.hdr.VaultID)
	if err := ring.Remove(item); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	v.Subscribe(rec.add)
	epoch := v.Epoch()
	if err := v.UnlockWithKeyring(); !errors.Is(err, ErrKeyringKeyMissing) {
		t.Fatalf("after removing the item: %v", err)
	}
	if s := v.Status(); s.Epoch <= epoch || !strings.Contains(s.KeyringNote, "not in the OS keyring") || s.State != StateLocked {
		t.Fatalf("status after missing key: %+v", s)
	}
	if k := rec.kinds(); len(k) != 1 || k[0] != EventChanged {
		t.Fatalf("events %v", k)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatalf("passphrase fallback: %v", err)
	}

	// Turning it on again writes a fresh key; a replaced key is refused.
	if err := v.EnableKeyring(true); err != nil {
		t.Fatal(err)
	}
	v.Lock("t")
	if err := ring.Set(keyring.Item{Key: item, Data: make([]byte, 32)}); err != nil {
		t.Fatal(err)
	}
	if err := v.UnlockWithKeyring(); !errors.Is(err, ErrKeyringKeyMissing) {
		t.Fatalf("with a replaced key: %v", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}

	// Off: the item is removed and keyring unlock refuses clearly.
	if err := v.EnableKeyring(false); err != nil {
		t.Fatal(err)
	}
	if _, err := ring.Get(item); !errors.Is(err, keyring.ErrKeyNotFound) {
		t.Fatalf("item still in the keyring after turning it off: %v", err)
	}
	v.Lock("t")
	if err := v.UnlockWithKeyring(); !errors.Is(err, ErrKeyringNotEnabled) {
		t.Fatalf("keyring off: %v", err)
	}
}

type failingKeyring struct{}

func (failingKeyring) OpenKeyring() (keyring.Keyring, error) {
	return nil, fmt.Errorf("secret-service: no session bus")
}

func TestKeyringUnavailable(t *testing.T) {
	opts := testOptions(newFakeClock())
	opts.Keyring = failingKeyring{}
	dir := t.TempDir()
	v := openVault(t, dir, opts)
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

	// A vault whose keyring was on, opened where no keyring works.
	kc := keyctlKeyring(t)
	on := testOptions(newFakeClock())
	on.Keyring = kc
	dir2 := t.TempDir()
	v2 := openVault(t, dir2, on)
	if err := v2.Create(pass(testPass), true); err != nil {
		t.Fatal(err)
	}
	v2.Close()
	off := testOptions(newFakeClock()) // Keyring nil: turned off in this build
	v3 := openVault(t, dir2, off)
	if err := v3.UnlockWithKeyring(); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("keyring off in config: %v", err)
	}
	if err := v3.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
}
