package sshhosts

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// FuzzRecording reads whatever a recording file may hold (one altered on
// disk, cut short, from another vault): it never panics, and anything it
// returns without an error authenticated as this vault's recording.
func FuzzRecording(f *testing.F) {
	dir := f.TempDir()
	v, err := vault.Open(filepath.Join(dir, "vault"), vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		f.Fatal(err)
	}
	defer v.Close()
	if err := v.Create(vault.Passphrase(passphrase), false); err != nil {
		f.Fatal(err)
	}
	m, err := New(Config{Vault: v, DataDir: filepath.Join(dir, "data"), ConnectTimeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	w, err := m.Create("seed", "host")
	if err != nil {
		f.Fatal(err)
	}
	w.Write([]byte("{\"version\":2}\n[0.1,\"o\",\"hello\"]\n"))
	w.Close()
	file := filepath.Join(dir, "data", RecordingsDir, "seed"+recordingExt)
	good, err := os.ReadFile(file)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("{\"v\":1,\"id\":\"seed\",\"host\":\"h\",\"key\":\"AA==\"}\n\x00\x00\x00\x10"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := m.Recording("seed")
		if err != nil {
			if !errors.Is(err, ErrRecordingDamaged) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if rec.ID != "seed" {
			t.Fatalf("read back %q", rec.ID)
		}
		m.Recordings("")
	})
}
