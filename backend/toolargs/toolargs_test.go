package toolargs

import (
	"encoding/json"
	"errors"
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
