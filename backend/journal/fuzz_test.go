package journal

import (
	"bytes"
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
		if err == nil && end != int64(len(data)) {
			t.Fatalf("clean end %d before the data's end %d", end, len(data))
		}
		for _, e := range got {
			if e.ID == "" {
				t.Fatal("a record without an id")
			}
		}
	})
}
