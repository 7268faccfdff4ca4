package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzReadRecords: a log of any bytes replays without panicking, yields
// only records whose frames are whole and checked, and reports where the
// good part ends; the records before a corrupt frame are kept, the carried
// audit records among them too, each exactly as framed.
func FuzzReadRecords(f *testing.F) {
	good, _ := frame(&Entry{Intent: intent("q1", "k1", "B1"), State: StateDispatched})
	carried := carriedFrame([16]byte{1, 2}, 4096, []byte("a sealed audit record"))
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good[:9]...))
	f.Add([]byte{0, 0, 0, 0})
	f.Add(carried)
	f.Add(carried[:len(carried)-1])
	f.Fuzz(func(t *testing.T, tail []byte) {
		data := append(append([]byte{}, good...), tail...)
		var got []*Entry
		end, err := readFrames(bytes.NewReader(data), func(e *Entry) { got = append(got, e) }, func(c Carried, fr []byte) {
			back := carriedFrame(c.Log, c.Offset, c.Record)
			if !bytes.Equal(back, fr) {
				t.Fatalf("a carried record does not frame back to its own bytes")
			}
		})
		if len(got) == 0 || got[0].ID != "q1" {
			t.Fatalf("the whole first record was lost (err %v)", err)
		}
		if end < int64(len(good)) || end > int64(len(data)) {
			t.Fatalf("end %d outside [%d, %d]", end, len(good), len(data))
		}
		// A clean end is the data's end, or a zero length where a record
		// would start (the room); replay judges what follows (FuzzReplay).
		if err == nil && end != int64(len(data)) &&
			(int64(len(data))-end < frameHeader || !bytes.Equal(data[end:end+4], []byte{0, 0, 0, 0})) {
			t.Fatalf("clean end %d before the data's end %d, not at a zero length", end, len(data))
		}
		for _, e := range got {
			if e.ID == "" {
				t.Fatal("a record without an id")
			}
		}
	})
}

// FuzzReplay: a log file of a whole record and any bytes after it opens
// with that record kept, and with nothing but zeros left past the records
// it keeps, whatever the tail held: so a record written there later can
// never line up with a stale one. Replaying the file again keeps the same
// records.
func FuzzReplay(f *testing.F) {
	good, _ := frame(&Entry{Intent: intent("q1", "k1", "B1"), State: StateDispatched})
	ghost, _ := frame(&Entry{Intent: intent("q9", "k9", "B1"), State: StateDispatched})
	f.Add([]byte{})
	f.Add(make([]byte, 4096))
	f.Add(append(make([]byte, 300), ghost...))
	f.Add(append(append([]byte{}, good...), good[:9]...))
	f.Add([]byte("\x00\x00\x00\x000000"))
	// A small room, and a directory in memory where there is one: every
	// replay here makes room and syncs it, which a disk makes slow.
	old := logRoom
	logRoom = 4 << 10
	defer func() { logRoom = old }()
	base := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	f.Fuzz(func(t *testing.T, tail []byte) {
		dir, err := os.MkdirTemp(base, "yett-fuzz-replay")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, LogName)
		if err := os.WriteFile(path, append(append([]byte{}, good...), tail...), 0o600); err != nil {
			t.Fatal(err)
		}
		replay := func() []string {
			w, err := openWAL(dir, DefaultResultDelay)
			if err != nil {
				t.Fatal(err)
			}
			defer w.close()
			var ids []string
			if _, err := w.replay(func(e *Entry) { ids = append(ids, e.ID) }); err != nil {
				t.Fatalf("replay: %v", err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range b[w.end:] {
				if c != 0 {
					t.Fatalf("byte %d past the records' end %d is %#x", w.end+int64(i), w.end, c)
				}
			}
			if w.room-w.end < logRoom/4 {
				t.Fatalf("room %d past the end %d", w.room-w.end, w.end)
			}
			return ids
		}
		first := replay()
		if len(first) == 0 || first[0] != "q1" {
			t.Fatalf("the whole first record was lost: %v", first)
		}
		if again := replay(); !slices.Equal(first, again) {
			t.Fatalf("replayed %v, then %v", first, again)
		}
	})
}
