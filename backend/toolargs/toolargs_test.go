package toolargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestObject(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{
		{``, nil}, {`{}`, nil}, {`{"url":"a","method":"GET"}`, nil}, {` {"a":{"a":1,"a":2}} `, nil},
		{`{"url":"a","url":"b"}`, ErrDuplicate}, {`{"url":"a","URL":"b"}`, ErrDuplicate},
		{`{"k":"a","\u212a":"b"}`, ErrDuplicate}, {`{"\u0055rl":"a","url":"b"}`, ErrDuplicate},
		{`{"s":1,"\u017f":2}`, ErrDuplicate},
		{`[]`, ErrNotObject}, {`null`, ErrNotObject}, {`"x"`, ErrNotObject}, {`{"a":1}{}`, ErrNotObject},
		{`{"a":1,}`, ErrNotObject}, {`{"a"}`, ErrNotObject}, {`{"a":1`, ErrNotObject},
	} {
		_, err := Object([]byte(c.in))
		if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("%s: %v, want %v", c.in, err, c.want)
		}
	}
	m, err := Strings(json.RawMessage(`{"X-A":"1","b":"2"}`))
	if err != nil || m["X-A"] != "1" || m["b"] != "2" {
		t.Fatalf("%v %v", m, err)
	}
	for _, in := range []string{`{"X-A":"1","x-a":"2"}`, `{"a":1}`, `{"a":null}`, `{"a":{"b":"c"}}`} {
		if _, err := Strings(json.RawMessage(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

// FuzzObject: Object never panics; it accepts only what encoding/json
// reads as one object, with no two keys equal under strings.EqualFold.
func FuzzObject(f *testing.F) {
	for _, s := range []string{`{"url":"a","URL":"b"}`, `{"a":{"b":[1,2]}}`, `{"k":1,"\u212a":2}`, `[]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Object(raw)
		if err != nil {
			return
		}
		if len(strings.TrimSpace(string(raw))) > 0 {
			var check map[string]json.RawMessage
			if json.Unmarshal(raw, &check) != nil || len(check) != len(m) {
				t.Fatalf("accepted %q", raw)
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		for i := range keys {
			for j := i + 1; j < len(keys); j++ {
				if strings.EqualFold(keys[i], keys[j]) {
					t.Fatalf("kept %q and %q", keys[i], keys[j])
				}
			}
		}
	})
}

// objectByDecoder is Object as it was first written, walking a
// json.Decoder's tokens: the reference FuzzObjectAsDecoder holds the
// one-pass reader to.
func objectByDecoder(raw []byte) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, ErrNotObject
	}
	out := map[string]json.RawMessage{}
	folded := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil, ErrNotObject
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, ErrNotObject
		}
		f := Fold(key)
		if folded[f] {
			return nil, ErrDuplicate
		}
		folded[f] = true
		out[key] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, ErrNotObject
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, ErrNotObject
	}
	return out, nil
}

func FuzzObjectAsDecoder(f *testing.F) {
	for _, s := range []string{`{"url":"a","URL":"b"}`, `{"a":{"b":[1,2]}}`, `{"k":1,"\u212a":2}`, `[]`, `{}`, ` `,
		`{"a":"\"}"}`, `{"a":1.5e3,"b":-0,"c":[{"d":"\\"}],"e":null,"f":true}`, `{"a":01}`, `{"a":1}}`, `{"\u00e9":1,"\u00c9":2}`,
		`{"s":1,"\u017f":2}`, "{\"a\":\"\xff\"}", "{\"\xff\":1}", `{"a" : [ 1 , 2 ] , "b":{}} `, `{"a":tru}`, `{"a":"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gerr := Object(raw)
		want, werr := objectByDecoder(raw)
		// Both refuse the same inputs; for one that is not JSON at all,
		// which refusal comes first may differ (the decoder streams, so a
		// key twice can show before the broken value after it).
		if (gerr == nil) != (werr == nil) || gerr != nil && json.Valid(raw) && !errors.Is(gerr, werr) {
			t.Fatalf("%q: error %v, the decoder says %v", raw, gerr, werr)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, the decoder finds %d", raw, len(got), len(want))
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || !bytes.Equal(bytes.TrimSpace(g), bytes.TrimSpace(v)) {
				t.Fatalf("%q: member %q is %q, the decoder reads %q", raw, k, g, v)
			}
		}
		// On valid JSON, ValidMembers (which does not check values) reads
		// the same members.
		if json.Valid(raw) && werr == nil {
			n := 0
			err := ValidMembers(raw, func(k string, v json.RawMessage) error {
				n++
				if !bytes.Equal(bytes.TrimSpace(want[k]), bytes.TrimSpace(v)) {
					t.Fatalf("%q: ValidMembers reads %q as %q", raw, k, v)
				}
				return nil
			})
			if err != nil || n != len(want) {
				t.Fatalf("%q: ValidMembers: %v, %d members", raw, err, n)
			}
		}
	})
}

func BenchmarkObject(b *testing.B) {
	raw := []byte(`{"method":"POST","url":"https://api.example.com/v1/repos/yett/issues?state=open","headers":{"Accept":"application/json","X-Trace":"abc"},"body":{"title":"a","labels":["x","y"],"n":12},"idempotency_key":"key-12345678"}`)
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Object(raw)
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			objectByDecoder(raw)
		}
	})
}
