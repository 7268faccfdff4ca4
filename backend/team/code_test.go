package team

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

const codeCanary = "CANARY-team-code-password-8d2e11aa"

func sampleInvitation() Invitation {
	key, _ := newSigningKey()
	return Invitation{TeamID: "0123456789", Database: Database{Host: "db.example.com", Port: 5432, Name: "team", SSLMode: "verify-full"},
		Role: "yett_0123456789_m0011223344556677", Password: vault.NewSecret([]byte(codeCanary)), ID: "inv-0011223344556677",
		LeadKey: Fingerprint(key.Public()), Member: "mia@example.com", Kind: KindMember, ExpiresAt: time.Unix(1_900_000_000, 0).UTC()}
}

// An invitation code reads back as it was made, also when a mail program
// wrapped it or a person pasted it with spaces around; it prints as
// REDACTED.
func TestInvitationCodeRoundTrip(t *testing.T) {
	inv := sampleInvitation()
	code := inv.Code()
	text := string(code.Bytes())
	if !strings.HasPrefix(text, codePrefix) || len(text) > 1000 {
		t.Fatalf("code %d bytes", len(text))
	}
	if fmt.Sprint(code, inv) != "REDACTED "+fmt.Sprint(inv) || strings.Contains(fmt.Sprintf("%+v %#v", inv, inv), codeCanary) {
		t.Fatal("the code or the invitation prints its password")
	}
	wrapped := "  " + text[:40] + "\n" + text[40:90] + "\r\n" + text[90:] + "\n"
	for _, in := range []string{text, wrapped} {
		got, err := ParseCode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Password.Bytes()) != codeCanary {
			t.Fatal("the password did not come back")
		}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", inv) {
			t.Fatalf("got %+v\nwant %+v", got, inv)
		}
	}
}

// A code that is not whole, altered or made for another purpose is
// refused with words of its own, never its text.
func TestInvitationCodeRefusals(t *testing.T) {
	inv := sampleInvitation()
	code := inv.Code()
	text := string(code.Bytes())
	flip := []byte(text)
	flip[len(flip)/2] ^= 1
	plainDB := sampleInvitation()
	plainDB.Database.SSLMode = "disable"
	plainCode := plainDB.Code()
	for name, in := range map[string]string{
		"empty":              "",
		"another prefix":     "yett-team-2-" + strings.TrimPrefix(text, codePrefix),
		"cut":                text[:len(text)-10],
		"one character":      string(flip),
		"too long":           text + strings.Repeat("A", maxCode),
		"plain text remote":  string(plainCode.Bytes()),
		"not base64":         codePrefix + "!!!!",
		"the password alone": codeCanary,
	} {
		_, err := ParseCode([]byte(in))
		if !errors.Is(err, ErrBadCode) {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.Contains(err.Error(), codeCanary) || (len(in) > 16 && strings.Contains(err.Error(), in[len(codePrefix):len(codePrefix)+8])) {
			t.Errorf("%s: the error quotes the code: %v", name, err)
		}
	}
}

// FuzzParseCode: no input makes the parser panic or quote it; whatever it
// accepts is an invitation it would make again byte for byte.
func FuzzParseCode(f *testing.F) {
	inv := sampleInvitation()
	code := inv.Code()
	f.Add(code.Bytes())
	f.Add([]byte(codePrefix))
	f.Add([]byte(codePrefix + "e30"))
	f.Add([]byte("postgres://u:p@h/d"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := ParseCode(in)
		if err != nil {
			if !errors.Is(err, ErrBadCode) {
				t.Fatalf("not ErrBadCode: %v", err)
			}
			// An input of a secret's length is never quoted; a short one
			// (after trimming: "1" and spaces) can match the message's own
			// words, "yett-team-1-".
			if q := bytes.TrimSpace(in); len(q) >= 24 && strings.Contains(err.Error(), string(q)) {
				t.Fatalf("the error quotes the input: %v", err)
			}
			return
		}
		again := got.Code()
		back, err := ParseCode(again.Bytes())
		if err != nil {
			t.Fatalf("a code it accepted does not read back when made again: %v", err)
		}
		if !back.Password.Equal(got.Password) {
			t.Fatal("the password changed on the way round")
		}
		if fmt.Sprintf("%+v", back) != fmt.Sprintf("%+v", got) {
			t.Fatalf("round trip: %+v != %+v", back, got)
		}
	})
}
