package oskeyring_test

import (
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
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/vault/oskeyring"
	"github.com/yettdev/yett/internal/testsupport/desktoptest"
	"golang.org/x/sys/unix"
)

func uniqueName(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// keyctlKeyring is the kernel keyring backend under a throwaway name in
// the user keyring; the named keyring is unlinked at cleanup.
func keyctlKeyring(t *testing.T) oskeyring.Keyring {
	t.Helper()
	o := oskeyring.Keyring{Backends: []keyring.BackendType{keyring.KeyCtlBackend}, ServiceName: uniqueName("yett-test-"), KeyCtlScope: "user"}
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
	// A bus with no service directories: with the system's session config,
	// the first call to org.freedesktop.secrets could auto-start a second,
	// locked gnome-keyring-daemon that wins the name before ours.
	addr := desktoptest.BareSessionBus(t)
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
		testKeyringUnlock(t, oskeyring.Keyring{Backends: []keyring.BackendType{keyring.SecretServiceBackend}, ServiceName: uniqueName("yett-test-")})
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

const testPass = "correct horse battery staple"

// namedStore remembers the item names the vault writes, so the test can
// remove or replace the item behind the vault's back.
type namedOpener struct {
	oskeyring.Keyring
	names *[]string
}

func (o namedOpener) OpenKeyring() (vault.KeyStore, error) {
	s, err := o.Keyring.OpenKeyring()
	if err != nil {
		return nil, err
	}
	return namedStore{s, o.names}, nil
}

type namedStore struct {
	vault.KeyStore
	names *[]string
}

func (s namedStore) Set(name, label string, secret []byte) error {
	*s.names = append(*s.names, name)
	return s.KeyStore.Set(name, label, secret)
}

func testKeyringUnlock(t *testing.T, kr oskeyring.Keyring) {
	var names []string
	opts := vault.Options{Keyring: namedOpener{kr, &names}, KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}}
	dir := t.TempDir()
	open := func() *vault.Vault {
		v, err := vault.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	v := open()
	if err := v.Create(vault.Passphrase(testPass), true); err != nil {
		t.Fatal(err)
	}
	if s := v.Status(); !s.KeyringEnabled || s.KeyringNote != "" {
		t.Fatalf("status after create with keyring: %+v", s)
	}
	if _, err := v.Credentials().Add(vault.NewCredential{
		Name: "k", Secret: vault.NewSecret([]byte("CANARY-keyring")), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{"api.example.com"}, Approval: vault.ApprovalSession,
	}); err != nil {
		t.Fatal(err)
	}
	v.Close()

	// A new Vault (as after a restart) unlocks from the keyring alone.
	v = open()
	if err := v.UnlockWithKeyring(); err != nil {
		t.Fatalf("UnlockWithKeyring: %v", err)
	}
	if l, _ := v.Credentials().List(); len(l) != 1 {
		t.Fatalf("credentials after keyring unlock: %v", l)
	}
	v.Lock("t")

	// The item disappears: a clear error, a new epoch, passphrase still works.
	ring, err := kr.OpenKeyring()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		t.Fatalf("items written: %v", names)
	}
	item := names[0]
	if err := ring.Remove(item); err != nil {
		t.Fatal(err)
	}
	var events []vault.Event
	v.Subscribe(func(e vault.Event) { events = append(events, e) })
	epoch := v.Epoch()
	if err := v.UnlockWithKeyring(); !errors.Is(err, vault.ErrKeyringKeyMissing) {
		t.Fatalf("after removing the item: %v", err)
	}
	if s := v.Status(); s.Epoch <= epoch || !strings.Contains(s.KeyringNote, "not in the OS keyring") || s.State != vault.StateLocked {
		t.Fatalf("status after missing key: %+v", s)
	}
	if len(events) != 1 || events[0].Kind != vault.EventChanged {
		t.Fatalf("events %v", events)
	}
	if err := v.Unlock(vault.Passphrase(testPass)); err != nil {
		t.Fatalf("passphrase fallback: %v", err)
	}

	// Turning it on again writes a fresh key; a replaced key is refused.
	if err := v.EnableKeyring(true); err != nil {
		t.Fatal(err)
	}
	v.Lock("t")
	if err := ring.Set(item, "replaced", make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	if err := v.UnlockWithKeyring(); !errors.Is(err, vault.ErrKeyringKeyMissing) {
		t.Fatalf("with a replaced key: %v", err)
	}
	if err := v.Unlock(vault.Passphrase(testPass)); err != nil {
		t.Fatal(err)
	}

	// Off: the item is removed and keyring unlock refuses clearly.
	if err := v.EnableKeyring(false); err != nil {
		t.Fatal(err)
	}
	if _, err := ring.Get(item); !errors.Is(err, vault.ErrKeyNotFound) {
		t.Fatalf("item still in the keyring after turning it off: %v", err)
	}
	v.Lock("t")
	if err := v.UnlockWithKeyring(); !errors.Is(err, vault.ErrKeyringNotEnabled) {
		t.Fatalf("keyring off: %v", err)
	}
}

func TestDefaultNeverUsesFileBackend(t *testing.T) {
	for _, b := range oskeyring.Default().Backends {
		if b == keyring.FileBackend || b == keyring.PassBackend {
			t.Fatalf("default backends include %s", b)
		}
	}
	// Even when configured, the file backend is skipped.
	_, err := oskeyring.Keyring{Backends: []keyring.BackendType{keyring.FileBackend}, ServiceName: "x"}.OpenKeyring()
	if err == nil {
		t.Fatal("the file backend was opened")
	}
}
