package sshhosts

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/vault"
)

func TestRecordingsAreSealedAndReadOnlyWhileUnlocked(t *testing.T) {
	w := newWorld(t)
	const canary = "RECORDING-CANARY-7f3a"
	wr, err := w.m.Create("req-1", "host-a")
	if err != nil {
		t.Fatal(err)
	}
	cast, err := sshaction.NewCast(wr, sshaction.CastHeader{Command: "echo", Title: "ops@db"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cast.Output([]byte(canary + "\n"))
	cast.Input([]byte("stdin line\n"))
	if err := wr.Close(); err != nil || cast.Err() != nil {
		t.Fatal(err, cast.Err())
	}
	file := filepath.Join(w.dir, "data", RecordingsDir, "req-1"+recordingExt)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(canary)) || bytes.Contains(raw, []byte("stdin line")) {
		t.Fatal("the recording is in the clear on disk")
	}

	rec, err := w.m.Recording("req-1")
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Complete || rec.HostID != "host-a" || !bytes.Contains(rec.Cast, []byte(canary)) ||
		!bytes.HasPrefix(rec.Cast, []byte(`{"version":2`)) {
		t.Fatalf("read back %+v %q", rec.RecordingView, rec.Cast)
	}
	list, err := w.m.Recordings("host-a")
	if err != nil || len(list) != 1 || list[0].ID != "req-1" {
		t.Fatalf("list %+v %v", list, err)
	}
	if other, _ := w.m.Recordings("host-b"); len(other) != 0 {
		t.Fatalf("another host's list %+v", other)
	}

	// Cut short (Yett stopped while the command ran): readable, not complete.
	wr2, _ := w.m.Create("req-2", "host-a")
	wr2.Write([]byte("partial output"))
	rec2, err := w.m.Recording("req-2")
	if err != nil || rec2.Complete || string(rec2.Cast) != "partial output" {
		t.Fatalf("an unfinished recording: %+v %v", rec2, err)
	}
	wr2.Close()

	// Altered on disk: not shown.
	bad := bytes.Clone(raw)
	bad[len(bad)-30] ^= 1
	os.WriteFile(file, bad, 0o600)
	if _, err := w.m.Recording("req-1"); !errors.Is(err, ErrRecordingDamaged) {
		t.Fatalf("an altered recording: %v", err)
	}
	// Cut after its last frame was written: a frame missing from the end
	// reads as unfinished, never as complete.
	os.WriteFile(file, raw[:len(raw)-4-16], 0o600)
	if rec, err := w.m.Recording("req-1"); err != nil || rec.Complete {
		t.Fatalf("a truncated recording: %v complete=%v", err, rec != nil && rec.Complete)
	}
	os.WriteFile(file, raw, 0o600)

	if _, err := w.m.Recording("../etc/passwd"); !errors.Is(err, ErrNoRecording) {
		t.Fatalf("a path as id: %v", err)
	}
	if err := w.v.Lock("test"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.m.Recording("req-1"); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("reading while locked: %v", err)
	}
	if _, err := w.m.Create("req-3", "host-a"); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("recording while locked: %v", err)
	}
	var _ io.WriteCloser = wr
}
