package credimport

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/vault"
)

func seedFiles(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, name := range []string{"bitwarden.json", "bitwarden-encrypted.json", "bitwarden-password.json", "bitwarden.csv", "onepassword.csv"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return append(out,
		[]byte("export A='x\\'y' # c\r\nB=\"multi\nline\"\nC=${D}\nA=again\n"),
		[]byte("JIRA_URL=https://u:p@acme.atlassian.net:8443/x\nJIRA_TOKEN=t\n"),
		[]byte("\xef\xbb\xbfTitle,Url,Username,Password\n\"a\"\"b\",c,d,\"e\nf\"\n"),
		[]byte(`{"encrypted":false,"items":[{"type":1,"name":"n","fields":[{"name":"k","value":"v","type":1}],"login":{"uris":[{"uri":"h"}],"password":"p"}}]}`),
	)
}

var setAgain = regexp.MustCompile(`^set again on line [1-9][0-9]*, the value programs read$`)

// FuzzRead: whatever the input, Read neither panics nor says anything but
// its fixed texts, and every entry is one the vault would take (or says
// why not and holds no value).
func FuzzRead(f *testing.F) {
	for _, s := range seedFiles(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := Read(data)
		if err != nil {
			checkError(t, err)
			return
		}
		defer src.Wipe()
		if !slices.Contains(Formats, src.Format) || len(src.Entries) == 0 || len(src.Entries) > MaxEntries {
			t.Fatalf("format %q, %d entries", src.Format, len(src.Entries))
		}
		lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1
		for _, e := range src.Entries {
			checkEntry(t, e, lines)
		}
	})
}

func checkError(t *testing.T, err error) {
	t.Helper()
	var le *LineError
	switch {
	case errors.As(err, &le):
		if !slices.Contains(lineReasons, le.Reason) || le.Line < 0 {
			t.Fatalf("reason %q at line %d", le.Reason, le.Line)
		}
	case !slices.ContainsFunc([]error{ErrTooLarge, ErrTooMany, ErrNotText, ErrEmpty, ErrEncrypted, ErrOnePUX},
		func(e error) bool { return e == err }):
		t.Fatalf("an error of no known kind: %v", err)
	}
}

func checkEntry(t *testing.T, e Entry, lines int) {
	t.Helper()
	if e.Problem == "" {
		v := e.Secret.Bytes()
		if len(v) == 0 || len(v) > vault.MaxSecretLen || bytes.ContainsAny(v, "\r\n\x00") {
			t.Fatalf("%q: an importable value the vault would refuse (%d bytes)", e.Name, len(v))
		}
		if e.Length != utf8.RuneCount(v) || e.Kind == KindUnknown || e.Kind == KindEmpty {
			t.Fatalf("%q: length %d kind %q", e.Name, e.Length, e.Kind)
		}
	} else {
		if !slices.Contains(Problems, e.Problem) && !setAgain.MatchString(e.Problem) {
			t.Fatalf("a problem that is not a fixed text: %q", e.Problem)
		}
		if e.Secret.Len() != 0 {
			t.Fatalf("%q: a refused entry keeps its value", e.Name)
		}
	}
	if !slices.Contains(Kinds, e.Kind) || e.Line < 1 || e.Line > lines {
		t.Fatalf("%q: kind %q line %d of %d", e.Name, e.Kind, e.Line, lines)
	}
	if e.Host != "" {
		if p, err := vault.ParseHostPattern(e.Host); err != nil || p.String() != e.Host || p.Wildcard {
			t.Fatalf("suggested host %q is not a host binding: %v", e.Host, err)
		}
	}
	for _, s := range []string{e.Name, e.Field, e.Username, e.SuggestedName()} {
		if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
			t.Fatalf("a text with control or format characters: %q", s)
		}
	}
	if n := e.SuggestedName(); utf8.RuneCountInString(n) > maxName {
		t.Fatalf("suggested name of %d characters", utf8.RuneCountInString(n))
	}
}

const fuzzCanary = "ZQXCANARYVALUEZQX"

// FuzzReadNeverQuotes: a value written where each format keeps one, with
// anything before and after it, never reaches a name, field, user name,
// host, problem or error.
func FuzzReadNeverQuotes(f *testing.F) {
	f.Add([]byte("A=1"), []byte(" # c"), uint8(0))
	f.Add([]byte("\"x"), []byte("\"\n"), uint8(0))
	f.Add([]byte("T,u"), []byte(",,"), uint8(1))
	f.Add([]byte(`"n","u`), []byte(`"`), uint8(1))
	f.Add([]byte(`n`), []byte(`x`), uint8(2))
	f.Fuzz(func(t *testing.T, before, after []byte, format uint8) {
		if bytes.Contains(bytes.ToUpper(before), []byte(fuzzCanary)) || bytes.Contains(bytes.ToUpper(after), []byte(fuzzCanary)) {
			return // the canary must be where a value is, not also elsewhere
		}
		var in []byte
		switch format % 3 {
		case 0:
			in = slices.Concat(before, []byte("\nK="), []byte(fuzzCanary), after)
		case 1:
			// The title and the rest of the password, with nothing that
			// would move the value out of the Password column.
			strip := func(b []byte) []byte {
				return bytes.Map(func(r rune) rune {
					if strings.ContainsRune(",\"\r\n", r) {
						return -1
					}
					return r
				}, b)
			}
			in = slices.Concat([]byte("Title,Url,Username,Password\n"), strip(before), []byte(",,,"+fuzzCanary), strip(after))
		default:
			in = slices.Concat([]byte(`{"items":[{"type":1,"name":"`), before, []byte(`","login":{"password":"`+fuzzCanary), after, []byte(`"}}]}`))
		}
		src, err := Read(in)
		if err != nil {
			if strings.Contains(strings.ToUpper(err.Error()), fuzzCanary) {
				t.Fatalf("the error quotes the value: %v", err)
			}
			return
		}
		defer src.Wipe()
		for _, e := range src.Entries {
			for _, s := range []string{e.Name, e.Field, e.Username, e.Host, e.Problem, e.SuggestedName()} {
				if strings.Contains(strings.ToUpper(s), fuzzCanary) {
					t.Fatalf("a text quotes the value: %q", s)
				}
			}
		}
	})
}
