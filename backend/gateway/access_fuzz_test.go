package gateway

import (
	"encoding/json"
	"testing"
	"unicode"
)

// FuzzParseAccessArgs: any arguments to yett.request_access read as a
// clear error or as a request whose kind is known, whose reason is
// printable words within the bound, and whose target is named the way
// Yett names it.
func FuzzParseAccessArgs(f *testing.F) {
	f.Add([]byte(`{"kind":"http","target":"https://api.github.com/repos/x","reason":"to open the PR"}`))
	f.Add([]byte(`{"kind":"ssh","target":"deploy-box","reason":"logs\n\u0007please"}`))
	f.Add([]byte(`{"kind":"operation","target":"tracker.create_issue","reason":"x","kind":"http"}`))
	f.Add([]byte(`{"kind":"http","target":"user:pass@169.254.169.254","reason":"meta"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := parseAccessArgs(json.RawMessage(raw))
		if err != nil {
			return
		}
		if a.Kind != "http" && a.Kind != "ssh" && a.Kind != "operation" || a.Target == "" || a.Reason == "" || len([]rune(a.Reason)) > maxAccessReason {
			t.Fatalf("accepted %+v", a)
		}
		for _, r := range a.Reason {
			if !unicode.IsPrint(r) {
				t.Fatalf("reason holds %U", r)
			}
		}
	})
}
