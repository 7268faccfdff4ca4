package rpcframe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestOversizedFrameKeepsItsID(t *testing.T) {
	big := strings.Repeat("A", 4096)
	cases := []struct {
		name, frame, want string // want "" means the reply says null
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"` + big + `"}}`, `7`},
		{"id last", `{"jsonrpc":"2.0","method":"tools/call","params":{"x":"` + big + `"},"id":"req-9"}`, `"req-9"`},
		{"id after nested id", `{"params":{"id":1,"x":"` + big + `"},"id":2,"jsonrpc":"2.0","method":"m"}`, `2`},
		{"negative id", ` {"id" : -12 ,"params":{"x":"` + big + `"}}`, `-12`},
		// The id the client sent comes first: nothing after it (a second
		// id, an escaped key, broken JSON past the limit) takes it back.
		{"second id after the first", `{"id":1,"id":2,"params":{"x":"` + big + `"}}`, `1`},
		{"id, then an escaped key", `{"jsonrpc":"2.0","id":21,"method":"m","params":{"x":"` + big + `"},"\u0069d":22}`, `21`},
		{"id, then broken JSON past the limit", `{"jsonrpc":"2.0","id":"q-31","params":{"x":"` + big + `"}}}}]]"`, `"q-31"`},
		{"escaped key before the id", `{"\u006aa":1,"id":5,"params":{"x":"` + big + `"}}`, ``},
		{"escaped key", `{"\u0069d":3,"params":{"x":"` + big + `"}}`, ``},
		{"escaped string id", `{"id":"a\"b","params":{"x":"` + big + `"}}`, ``},
		{"fractional id", `{"id":1.5,"params":{"x":"` + big + `"}}`, ``},
		{"null id", `{"id":null,"params":{"x":"` + big + `"}}`, ``},
		{"object id", `{"id":{"a":1},"params":{"x":"` + big + `"}}`, ``},
		{"id inside a string", `{"params":{"x":"\",\"id\":5,\"` + big + `"}}`, ``},
		{"no id", `{"jsonrpc":"2.0","method":"n","params":{"x":"` + big + `"}}`, ``},
		{"array", `[{"id":1,"x":"` + big + `"}]`, ``},
		{"huge number", `{"id":123456789012345678901234,"x":"` + big + `"}`, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.frame+"\n"+`{"jsonrpc":"2.0","id":99,"method":"after"}`+"\n"), Limits{MaxFrameBytes: 1024})
			_, rej, err := r.Next()
			if err != nil || rej == nil {
				t.Fatalf("rej %v err %v", rej, err)
			}
			var reply struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(rej.Reply, &reply); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = "null"
			}
			if string(reply.ID) != want {
				t.Fatalf("reply id %s, want %s (%s)", reply.ID, want, rej.Reply)
			}
			if msg, _, _ := r.Next(); msg == nil {
				t.Fatal("the stream did not recover after the oversized frame")
			}
		})
	}
}

// FuzzIDScan: for any frame, the id the streaming scan recovers is the first
// top-level id a full parse of the same frame finds, or none. It never
// invents one.
func FuzzIDScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"a"}`, `{"id":"x","id":"y"}`, `{"a":{"id":2},"id":3}`,
		`{"id" : "req" , "method":"m"}`, `{"\u0069d":1}`, `{"id":-0}`, `{"id":1e3}`, `{"a":"\\","id":4}`,
	} {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, frame []byte, cut uint8) {
		var s idScanner
		// Feed in two pieces, as chunks arrive, at an arbitrary split.
		k := int(cut) % (len(frame) + 1)
		s.feed(frame[:k])
		s.feed(frame[k:])
		got := s.id()
		if got == nil {
			return
		}
		if !json.Valid(frame) {
			return // an oversized frame is never validated; only valid frames are compared
		}
		if firstByte(frame) != '{' {
			t.Fatalf("id %s from a non-object %q", got, frame)
		}
		ids := topLevelIDs(t, frame)
		if len(ids) == 0 || !bytes.Equal(bytes.TrimSpace(ids[0]), got) {
			t.Fatalf("scan found id %s, a decoder found %q in %q", got, ids, frame)
		}
	})
}

// topLevelIDs returns the raw values of every top-level "id" member of a
// valid JSON object, keys compared after unescaping.
func topLevelIDs(t *testing.T, frame []byte) []json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(frame))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var ids []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		if tok == "id" {
			ids = append(ids, raw)
		}
	}
	return ids
}
