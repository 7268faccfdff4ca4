package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
)

const canary = "CANARY-sk-live-7f3a9c1e5b2d4a6f"

// A credential wrongly put into a free-text field (the gateway's bug, not
// ours) is still only ever written encrypted: no file in the log directory
// holds it in plaintext, and only the identity reads it back.
func TestCanaryNeverInPlaintext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, 2)
	e := sampleEvent(1)
	e.Action.Target = "https://user:" + canary + "@api.example.com/?token=" + canary
	e.Action.Operation = "Bearer " + canary
	e.ApprovedBy = canary
	for range 3 {
		if _, err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		b := mustRead(t, filepath.Join(dir, de.Name()))
		for _, form := range []string{canary, "sk-live-7f3a9c1e5b2d4a6f"} {
			if bytes.Contains(b, []byte(form)) {
				t.Errorf("%s contains the canary in plaintext", de.Name())
			}
		}
	}
	n := 0
	for got, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if got.Event.ApprovedBy == canary {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("decrypted %d canary events, want 3", n)
	}
}

// credentialish matches field names that could only exist to carry secret
// material. The event schema must never grow one.
var credentialish = regexp.MustCompile(`(?i)(secret|token|passw|private|cookie|authorization$|header|body|payload|bearer|api_?key|^key$|_key$|credential$|seed|cert)`)

func TestEventSchemaHasNoCredentialField(t *testing.T) {
	allowed := map[string]bool{
		// Opaque IDs that name a binding or an authorization row; their
		// values are identifiers the store made, never the secret itself.
		"CredentialRef": true, "AuthorizationID": true,
	}
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() != reflect.TypeOf(Event{}).PkgPath() {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := path + "." + f.Name
			if !allowed[f.Name] && (credentialish.MatchString(f.Name) || credentialish.MatchString(f.Tag.Get("json"))) {
				t.Errorf("%s looks like a field for credential material", name)
			}
			switch f.Type.Kind() {
			case reflect.Map, reflect.Interface, reflect.Slice:
				if f.Type.Elem().Kind() != reflect.Struct {
					t.Errorf("%s is an open-ended %s: events have typed fields only", name, f.Type.Kind())
				}
			}
			walk(name, f.Type)
		}
	}
	walk("Event", reflect.TypeOf(Event{}))
	if !credentialish.MatchString("refresh_token") || !credentialish.MatchString("AccessToken") {
		t.Fatal("pattern does not catch the names it is for")
	}
}

func TestAppendRejectsInvalidEvent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, 0)
	defer l.Close()
	long := sampleEvent(1)
	long.Action.Target = string(bytes.Repeat([]byte("x"), maxFieldLen)) + canary
	for name, e := range map[string]Event{
		"unknown type": {Type: "token_dump", Time: t0},
		"no time":      {Type: EventGatewayStarted},
		"oversized":    long,
	} {
		_, err := l.Append(context.Background(), e)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if bytes.Contains([]byte(err.Error()), []byte(canary)) {
			t.Errorf("%s: error quotes the value", name)
		}
	}
}
