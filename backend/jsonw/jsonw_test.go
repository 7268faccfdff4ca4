package jsonw

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString: exactly the bytes encoding/json writes for a string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `"\<>&`, "\n\r\t\b\f\x00\x1f\x7f", "\u2028\u2029é", "\xff\xfe", "a\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: wrote %s, encoding/json writes %s", s, got, want)
		}
	})
}
