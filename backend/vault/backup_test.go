package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func credentialNames(t *testing.T, v *Vault) []string {
	t.Helper()
	list, err := v.Credentials().List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list {
		out = append(out, c.Name)
	}
	return out
}

// Export, change things, restore: the vault is as it was at the export,
// with the same secrets; the epoch only goes up; the file that was replaced
// is kept; the backup holds no secret in the clear and no keyring wrap.
func TestBackupRoundTrip(t *testing.T) {
	kr := &memKeyring{}
	o := testOptions(newFakeClock())
	o.Keyring = kr
	dir := t.TempDir()
	v := openVault(t, dir, o)
	if err := v.Create(pass(testPass), true); err != nil {
		t.Fatal(err)
	}
	a, _ := v.Credentials().Add(sampleCredential("alpha", "CANARY-backup-alpha"))
	b := sampleCredential("beta", "CANARY-backup-beta")
	b.Hosts = []string{"beta.example.com"}
	if _, err := v.Credentials().Add(b); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	v.Subscribe(rec.add)

	out := filepath.Join(t.TempDir(), "yett.yettbackup")
	if err := v.ExportBackup(pass("wrong passphrase!!"), out); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("export with a wrong passphrase: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused export left a file")
	}
	if err := v.ExportBackup(pass(testPass), out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("CANARY")) || bytes.Contains(raw, []byte(testPass)) || bytes.Contains(raw, []byte("alpha")) {
		t.Fatal("the backup holds a secret, the passphrase or a credential's name in the clear")
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(out + ".yett-tmp-*"); len(left) != 0 || fileExists(out+"-wal") {
		t.Fatalf("the export left %v", left)
	}
	if e := rec.events[len(rec.events)-1]; e.Change != ChangeBackupExported {
		t.Fatalf("export event %+v", e)
	}

	// Things change after the backup.
	if _, err := v.Credentials().Rotate(a.ID, 1, NewSecret([]byte("CANARY-backup-rotated"))); err != nil {
		t.Fatal(err)
	}
	if err := v.Credentials().Remove(credentialID(t, v, "beta")); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Credentials().Add(sampleCredential("gamma", "CANARY-backup-gamma")); err != nil {
		t.Fatal(err)
	}
	epoch := v.Epoch()

	// A wrong passphrase or a file that is not a backup changes nothing.
	before := fileHash(t, dir)
	if err := v.RestoreBackup(out, pass("wrong passphrase!!")); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("restore with a wrong passphrase: %v", err)
	}
	junk := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(junk, []byte("not a vault at all, just some text that is long enough to look like a file of some kind........................................................................"), 0o600)
	if err := v.RestoreBackup(junk, pass(testPass)); !errors.Is(err, ErrNotABackup) {
		t.Fatalf("restore of a text file: %v", err)
	}
	if fileHash(t, dir) != before || v.Status().State != StateUnlocked {
		t.Fatal("a refused restore changed the vault")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, FileName+".restoring-*")); len(left) != 0 {
		t.Fatalf("refused restores left %v", left)
	}

	rec.events = nil
	p := pass(testPass)
	if err := v.RestoreBackup(out, p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p, make(Passphrase, len(p))) {
		t.Error("RestoreBackup did not zero the passphrase")
	}
	s := v.Status()
	if s.State != StateUnlocked || s.Epoch <= epoch || s.KeyringEnabled {
		t.Fatalf("after restore %+v (epoch before %d)", s, epoch)
	}
	if got := credentialNames(t, v); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("restored credentials %v", got)
	}
	view, sec, err := credentialAndSecret(v, apiRoot)
	if err != nil || view.Version != 1 || secretText(t, sec) != "CANARY-backup-alpha" {
		t.Fatalf("the restored secret: %+v %v", view, err)
	}
	if kinds := rec.kinds(); !slices.Equal(kinds, []EventKind{EventLocked, EventRestored, EventUnlocked}) {
		t.Fatalf("events %v", kinds)
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, FileName+".before-restore-*")); len(aside) == 0 {
		t.Fatal("the replaced vault file was not kept")
	}

	// The replaced file is intact: it still opens with gamma in it.
	aside, _ := filepath.Glob(filepath.Join(dir, FileName+".before-restore-*"))
	keep := t.TempDir()
	for _, f := range aside {
		suffix := f[len(f)-4:]
		name := FileName
		if suffix == "-wal" || suffix == "-shm" {
			name += suffix
		}
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(keep, name), b, 0o600)
	}
	old := openVault(t, keep, testOptions(newFakeClock()))
	if err := old.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if got := credentialNames(t, old); !slices.Equal(got, []string{"alpha", "gamma"}) {
		t.Fatalf("the kept file lists %v", got)
	}
}

func credentialID(t *testing.T, v *Vault, name string) string {
	t.Helper()
	list, _ := v.Credentials().List()
	for _, c := range list {
		if c.Name == name {
			return c.ID
		}
	}
	t.Fatalf("no credential %q", name)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A backup restored on a new computer (an uninitialised vault) and into a
// vault whose file is damaged.
func TestRestoreIntoNewAndDamagedVaults(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	if _, err := v.Credentials().Add(sampleCredential("alpha", "CANARY-new-computer")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b.yettbackup")
	if err := v.ExportBackup(pass(testPass), out); err != nil {
		t.Fatal(err)
	}

	fresh := t.TempDir()
	w := openVault(t, fresh, testOptions(newFakeClock()))
	if err := w.RestoreBackup(out, pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if got := credentialNames(t, w); !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("restored on a new computer: %v", got)
	}
	if aside, _ := filepath.Glob(filepath.Join(fresh, FileName+".before-restore-*")); len(aside) != 0 {
		t.Fatalf("an empty vault was kept as %v", aside)
	}
	if w.VaultID() != v.VaultID() {
		t.Fatal("the restored vault is another vault")
	}

	damagedDir := t.TempDir()
	d := openVault(t, damagedDir, testOptions(newFakeClock()))
	if err := d.Create(pass(testPass), false); err != nil {
		t.Fatal(err)
	}
	d.Close()
	tamper(t, damagedDir, sqlExec(`UPDATE vault_meta SET manifest = x'00'`))
	d = openVault(t, damagedDir, testOptions(newFakeClock()))
	if s := d.Status(); s.State != StateDamaged {
		t.Fatalf("expected a damaged vault: %+v", s)
	}
	if err := d.RestoreBackup(out, pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if got := credentialNames(t, d); !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("restored over damage: %v", got)
	}
}
