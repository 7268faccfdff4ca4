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
// members by exact key. The members' values are slices of raw.
func Object(raw []byte) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	folded := map[string]bool{}
	err := Members(raw, func(key string, value json.RawMessage) error {
		f := foldKey(key)
		if folded[f] {
			return ErrDuplicate
		}
		folded[f] = true
		out[key] = value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Members calls fn with each member of the JSON object raw (empty means
// {}), in order, its key decoded and its value as it is spelled (a slice
// of raw), and stops at the first error fn returns. It refuses
// (ErrNotObject) anything but one well-formed object, and keeps no key:
// what a key given twice means is the caller's to say (Object refuses it).
//
// It reads the object in one pass over raw: each key is decoded (escapes
// and all) and each value is found by its extent and then checked whole
// with json.Valid. Every call's arguments come through here, and this is
// several times cheaper than a json.Decoder walking the tokens;
// FuzzObjectAsDecoder holds the two to the same answers.
func Members(raw []byte, fn func(key string, value json.RawMessage) error) error {
	return members(raw, true, fn)
}

// ValidMembers is Members for raw that json.Valid has already accepted
// (the policy point checks every frame whole): the values are not
// checked again.
func ValidMembers(raw []byte, fn func(key string, value json.RawMessage) error) error {
	return members(raw, false, fn)
}

func members(raw []byte, check bool, fn func(key string, value json.RawMessage) error) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return trailing(raw, i+1)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return ErrNotObject
		}
		end, ok := stringEnd(raw, i)
		if !ok {
			return ErrNotObject
		}
		key, ok := decodeKey(raw[i:end])
		if !ok {
			return ErrNotObject
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return ErrNotObject
		}
		i = skipSpace(raw, i+1)
		vend, ok := valueEnd(raw, i)
		if !ok || check && !json.Valid(raw[i:vend]) {
			return ErrNotObject
		}
		if err := fn(key, json.RawMessage(raw[i:vend:vend])); err != nil {
			return err
		}
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return ErrNotObject
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return trailing(raw, i+1)
		default:
			return ErrNotObject
		}
	}
}

// trailing is nil when nothing but white space follows the object.
func trailing(raw []byte, i int) error {
	if skipSpace(raw, i) != len(raw) {
		return ErrNotObject
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that opens at b[i].
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// valueEnd returns the index just past the JSON value that starts at
// b[i], by its extent alone (strings, nesting); json.Valid judges it.
func valueEnd(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := stringEnd(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j, j > i
}

// decodeKey decodes a quoted key: plain ASCII as it is, anything else as
// encoding/json decodes it (escapes, invalid UTF-8 replaced).
func decodeKey(q []byte) (string, bool) {
	plain := true
	for _, c := range q[1 : len(q)-1] {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(q[1 : len(q)-1]), true
	}
	var k string
	return k, json.Unmarshal(q, &k) == nil
}

// foldKey is Fold without its work for ASCII keys, which fold to their
// upper case (every orbit with an ASCII letter has the upper case as its
// smallest rune, the Kelvin and long s signs included).
func foldKey(k string) string {
	for i := 0; i < len(k); i++ {
		if k[i] >= 0x80 {
			return Fold(k)
		}
	}
	b := []byte(k)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
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
