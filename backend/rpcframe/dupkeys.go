package rpcframe

import (
	"encoding/json"

	"github.com/yettdev/yett/backend/toolargs"
)

// duplicateKey reports whether any object in frame, at any depth, names a
// key twice. Go's encoding/json, which the SDK decodes with, keeps the last
// of two equal keys, while a person or proxy reading the frame sees the
// first: `"name":"yett.status","name":"http.request"` would read as a status
// query and run an HTTP request. Keys are compared after unescaping, so
// "name" and "n\u0061me" are the same key.
//
// In the message itself and in its params object, keys that differ only in
// letter case count as the same too: the SDK decodes those into structs,
// whose fields encoding/json matches ignoring case (Unicode folding
// included). Deeper down, case is kept: a body may use both "Content" and
// "content", and a tool's own arguments are checked by backend/toolargs.
//
// frame must be valid JSON (json.Valid): this is a linear scan that trusts
// the grammar and only tracks strings, nesting and the key position.
func duplicateKey(frame []byte) bool {
	type level struct {
		object bool
		fold   bool // keys compared after case folding
		keys   []string
		atKey  bool // the next string is a key
	}
	var stack []level
	var lastKey string // the key whose value comes next, at the top level
	for i := 0; i < len(frame); i++ {
		c := frame[i]
		switch c {
		case '{':
			// The message (depth 0) and its params object (depth 1, under
			// "params") are decoded into structs.
			fold := len(stack) == 0 || (len(stack) == 1 && lastKey == "params")
			stack = append(stack, level{object: true, fold: fold, atKey: true})
		case '[':
			stack = append(stack, level{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if top := len(stack) - 1; top >= 0 && stack[top].object {
				stack[top].atKey = true
			}
		case '"':
			end, escaped := stringEnd(frame, i)
			if top := len(stack) - 1; top >= 0 && stack[top].object && stack[top].atKey {
				l := &stack[top]
				l.atKey = false
				raw := frame[i+1 : end]
				key := string(raw)
				if escaped {
					var s string
					if json.Unmarshal(frame[i:end+1], &s) != nil {
						return true // cannot happen in valid JSON; refuse
					}
					key = s
				}
				if top == 0 {
					lastKey = key
				}
				if l.fold {
					key = toolargs.Fold(key)
				}
				for _, k := range l.keys {
					if k == key {
						return true
					}
				}
				l.keys = append(l.keys, key)
			}
			i = end
		}
	}
	return false
}

// stringEnd returns the index of the quote that closes the JSON string
// opening at frame[start], and whether the string holds any escape.
func stringEnd(frame []byte, start int) (int, bool) {
	escaped := false
	for i := start + 1; i < len(frame); i++ {
		switch frame[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i, escaped
		}
	}
	return len(frame) - 1, escaped
}
