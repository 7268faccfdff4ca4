package vault

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

const newPass = "a completely different passphrase"

// copyVault copies the vault file (and its WAL, which holds the latest
// commits) into a new directory, as someone copying the file would.
func copyVault(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, FileName+suffix))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, FileName+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestChangePassphrase(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	if _, err := v.Credentials().Add(sampleCredential("api", "CANARY-passphrase")); err != nil {
		t.Fatal(err)
	}
	// Another process with the same file open, locked, since before the
	// change (the app and yett serve).
	other := openVault(t, dir, testOptions(newFakeClock()))
	rec := &recorder{}
	v.Subscribe(rec.add)
	epoch := v.Epoch()

	if _, err := v.ChangePassphrase(context.Background(), pass("not the passphrase"), pass(newPass)); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("a wrong current passphrase: %v", err)
	}
	if _, err := v.ChangePassphrase(context.Background(), pass(testPass), pass("short")); !errors.Is(err, ErrWeakPassphrase) {
		t.Fatalf("a weak new passphrase: %v", err)
	}
	if _, err := v.ChangePassphrase(context.Background(), pass(testPass), pass(testPass)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("the same passphrase again: %v", err)
	}
	cur, next := pass(testPass), pass(newPass)
	res, err := v.ChangePassphrase(context.Background(), cur, next)
	if err != nil {
		t.Fatal(err)
	}
	if res.KeyringRewrapped || res.KeyringCleared {
		t.Fatalf("keyring was off: %+v", res)
	}
	if !slices.Equal(cur, make(Passphrase, len(cur))) || !slices.Equal(next, make(Passphrase, len(next))) {
		t.Error("ChangePassphrase did not zero both passphrases")
	}
	if s := v.Status(); s.State != StateUnlocked || s.Epoch != epoch {
		t.Fatalf("the session should go on unchanged: %+v", s)
	}
	if len(rec.events) != 1 || rec.events[0].Change != ChangePassphrase {
		t.Fatalf("events %+v", rec.events)
	}

	// A copy of the file taken now: the old passphrase opens nothing.
	copyDir := copyVault(t, dir)
	cp := openVault(t, copyDir, testOptions(newFakeClock()))
	if err := cp.Unlock(pass(testPass)); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("the old passphrase on a copy of the file: %v", err)
	}
	if err := cp.Unlock(pass(newPass)); err != nil {
		t.Fatalf("the new passphrase on a copy of the file: %v", err)
	}
	if list, _ := cp.Credentials().List(); len(list) != 1 {
		t.Fatalf("the copy lists %d credentials", len(list))
	}

	// The process that had the file open before the change reads the new
	// header before unlocking.
	if err := other.Unlock(pass(testPass)); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("the old passphrase in another process: %v", err)
	}
	if err := other.Unlock(pass(newPass)); err != nil {
		t.Fatalf("the new passphrase in another process: %v", err)
	}

	v.Lock("t")
	if err := v.Unlock(pass(testPass)); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("the old passphrase after the change: %v", err)
	}
	if err := v.Unlock(pass(newPass)); err != nil {
		t.Fatal(err)
	}
}

// flakyKeyring works until broken, then refuses every write.
type flakyKeyring struct {
	memKeyring
	broken bool
}

func (f *flakyKeyring) OpenKeyring() (KeyStore, error) { return f, nil }

func (f *flakyKeyring) Set(name, label string, secret []byte) error {
	if f.broken {
		return errors.New("the keyring refused")
	}
	return f.memKeyring.Set(name, label, secret)
}

// With keyring unlock on, the change replaces the keyring key (the old
// item no longer opens the file), or, when the keyring cannot take the new
// one, turns keyring unlock off.
func TestChangePassphraseKeyring(t *testing.T) {
	kr := &flakyKeyring{}
	o := testOptions(newFakeClock())
	o.Keyring = kr
	dir := t.TempDir()
	v := openVault(t, dir, o)
	if err := v.Create(pass(testPass), true); err != nil {
		t.Fatal(err)
	}
	item := keyringItemName(v.hdr.VaultID)
	oldKey := append([]byte(nil), kr.items[item]...)
	oldCopy := copyVault(t, dir) // the file as it was, with the old wrap

	res, err := v.ChangePassphrase(context.Background(), pass(testPass), pass(newPass))
	if err != nil || !res.KeyringRewrapped {
		t.Fatalf("change with the keyring on: %+v %v", res, err)
	}
	if bytes.Equal(kr.items[item], oldKey) {
		t.Fatal("the keyring still holds the old key")
	}
	v.Lock("t")
	if err := v.UnlockWithKeyring(); err != nil {
		t.Fatalf("keyring unlock after the change: %v", err)
	}
	// The new keyring key does not open the old file's wrap, nor the old
	// key the new one.
	oc := openVault(t, oldCopy, o)
	if err := oc.UnlockWithKeyring(); !errors.Is(err, ErrKeyringKeyMissing) {
		t.Fatalf("the new keyring key on the old file: %v", err)
	}

	kr.broken = true
	res, err = v.ChangePassphrase(context.Background(), pass(newPass), pass(testPass))
	if err != nil || !res.KeyringCleared {
		t.Fatalf("change with a refusing keyring: %+v %v", res, err)
	}
	if s := v.Status(); s.KeyringEnabled || s.KeyringNote == "" {
		t.Fatalf("keyring unlock should be off, and say why: %+v", s)
	}
	v.Lock("t")
	if err := v.UnlockWithKeyring(); !errors.Is(err, ErrKeyringNotEnabled) {
		t.Fatalf("keyring unlock after it was cleared: %v", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
}

// blockingKeyring holds every call until released, like a keyring showing
// its own dialog to a person who has not answered yet.
type blockingKeyring struct {
	memKeyring
	release chan struct{}
	entered chan struct{}
}

func newBlockingKeyring() *blockingKeyring {
	return &blockingKeyring{release: make(chan struct{}), entered: make(chan struct{}, 16)}
}

func (b *blockingKeyring) OpenKeyring() (KeyStore, error) { return b, nil }

func (b *blockingKeyring) wait() {
	b.entered <- struct{}{}
	<-b.release
}

func (b *blockingKeyring) Get(name string) ([]byte, error) {
	b.wait()
	return b.memKeyring.Get(name)
}

func (b *blockingKeyring) Set(name, label string, secret []byte) error {
	b.wait()
	return b.memKeyring.Set(name, label, secret)
}

// Waiting for the keyring freezes nothing, and the person can stop waiting:
// nothing is changed, and a key stored after that is removed again.
func TestKeyringWaitCanBeCancelled(t *testing.T) {
	kr := newBlockingKeyring()
	o := testOptions(newFakeClock())
	o.Keyring = kr
	v := openVault(t, t.TempDir(), o)
	if err := v.Create(pass(testPass), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.EnableKeyringContext(ctx, true) }()
	<-kr.entered
	// Everything else goes on while the keyring's dialog is up.
	if s := v.Status(); s.State != StateUnlocked {
		t.Fatalf("status while waiting: %+v", s)
	}
	if _, err := v.Credentials().Add(sampleCredential("api", "CANARY-wait")); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrKeyringCancelled) {
			t.Fatalf("enable after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling did not end the wait")
	}
	if v.Status().KeyringEnabled {
		t.Fatal("keyring unlock turned on after the wait was cancelled")
	}
	close(kr.release) // the person answers the dialog late
	// The late key is removed again (the worker holds keyringMu until then).
	v.keyringMu.Lock()
	n := len(kr.items)
	v.keyringMu.Unlock()
	if n != 0 {
		t.Fatalf("the keyring holds %d items after a cancelled enable", n)
	}

	// Unlocking with the keyring: a passphrase unlock is not blocked by the
	// keyring's dialog, and the keyring's late answer is dropped.
	kr2 := newBlockingKeyring()
	close(kr2.release)
	o.Keyring = kr2
	dir := t.TempDir()
	w := openVault(t, dir, o)
	if err := w.Create(pass(testPass), true); err != nil {
		t.Fatal(err)
	}
	w.Lock("t")
	kr2.release = make(chan struct{})
	for len(kr2.entered) > 0 {
		<-kr2.entered
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	var keyringErr error
	go func() {
		defer wg.Done()
		keyringErr = w.UnlockWithKeyringContext(ctx)
	}()
	<-kr2.entered
	if err := w.Unlock(pass(testPass)); err != nil {
		t.Fatalf("a passphrase unlock while the keyring waits: %v", err)
	}
	cancel()
	wg.Wait()
	if !errors.Is(keyringErr, ErrKeyringCancelled) {
		t.Fatalf("keyring unlock after cancel: %v", keyringErr)
	}
	close(kr2.release)
	if s := w.Status(); s.State != StateUnlocked {
		t.Fatalf("state %+v", s)
	}
}
