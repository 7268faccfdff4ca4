// Package toolargs reads the arguments of an MCP tool call: one JSON object
// whose every key appears once, in one spelling.
//
// Go's encoding/json keeps the last of two equal keys and matches struct
// fields ignoring case (with Unicode folding: "idempotency_\u212aey", with a
// Kelvin sign, fills idempotency_key). Either lets one argument mean one
// thing to a check and another to the request, so this package refuses a
// key given twice or in two spellings that fold to the same, and callers
// match field names exactly.
package toolargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"
)

// Errors; their texts are safe to show the agent (they never echo a key or
// a value).
var (
	ErrNotObject = errors.New("arguments must be a single JSON object")
	ErrDuplicate = errors.New("a key is given twice, or in two letter cases")
)

// Object decodes raw (empty means {}) as one JSON object and returns its
// members by exact key.
func Object(raw []byte) (map[string]json.RawMessage, error) {
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

// Strings decodes raw (null or absent means none) as an object of string
// values with the same rule on keys.
func Strings(raw json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	obj, err := Object(raw)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, errors.New("values must be strings")
		}
		out[k] = s
	}
	return out, nil
}

// Fold maps s to a form shared by every spelling strings.EqualFold calls
// equal: each rune becomes the smallest rune of its Unicode simple-folding
// orbit.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}
