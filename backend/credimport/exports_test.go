package credimport

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func readFile(t *testing.T, name string) (*Source, error) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return Read(b)
}

// A Bitwarden JSON export as its clients write it: a login's password
// (its website's host, its user name), its hidden custom field, a
// login without a password, a note and a card refused, a note's custom
// field offered, an SSH key sent to SSH hosts, and an item whose name
// carries a right-to-left override and a bell, which are dropped.
func TestBitwardenJSON(t *testing.T) {
	src, err := readFile(t, "bitwarden.json")
	if err != nil {
		t.Fatal(err)
	}
	if src.Format != FormatBitwardenJSON {
		t.Fatalf("read as %s", src.Format)
	}
	check(t, src.Entries, []want{
		{name: "GitHub", user: "octo@example.com", host: "github.com", line: 10, value: "CANARY-import-bwpass-1"},
		{name: "GitHub", field: "API token", host: "github.com", line: 10, value: "CANARY-import-bwfield-2"},
		{name: "Router", user: "admin", line: 61, problem: problemNoPassword},
		{name: "Recovery codes", line: 78, problem: problemNote},
		{name: "Visa", line: 87, problem: problemCard},
		{name: "Stripe keys", field: "secret key", line: 96, value: "CANARY-import-bwfield-4"},
		{name: "deploy key", line: 112, problem: problemSSHKey},
		{name: "StagingAPI", user: "ci", host: "staging.example.com:8443", line: 120, value: "CANARY-import-bwpass-6"},
	})
	if got := src.Entries[1].SuggestedName(); got != "GitHub API token" {
		t.Errorf("suggested name %q", got)
	}
	assertNoCanary(t, src, nil)
}

// Both kinds of encrypted export are refused, and the refusal quotes
// nothing of them.
func TestBitwardenEncryptedIsRefused(t *testing.T) {
	for _, name := range []string{"bitwarden-encrypted.json", "bitwarden-password.json"} {
		src, err := readFile(t, name)
		if !errors.Is(err, ErrEncrypted) || src != nil {
			t.Fatalf("%s: %v", name, err)
		}
		assertNoCanary(t, nil, err)
	}
	// "encrypted" after the items counts too.
	src, err := Read([]byte(`{"items":[{"type":1,"name":"x","login":{"password":"2.` + canaryA + `|a|b"}}],"encrypted":true}`))
	if !errors.Is(err, ErrEncrypted) || src != nil {
		t.Fatalf("encrypted after the items: %v", err)
	}
}

// Bitwarden's CSV export: custom fields as "name: value" lines (a boolean
// field is offered as a flag, a linked one's null is skipped), websites
// joined by commas, a note refused, a field whose value had a line break
// refused rather than imported cut, a login without a password.
func TestBitwardenCSV(t *testing.T) {
	src, err := readFile(t, "bitwarden.csv")
	if err != nil {
		t.Fatal(err)
	}
	if src.Format != FormatBitwardenCSV {
		t.Fatalf("read as %s", src.Format)
	}
	check(t, src.Entries, []want{
		{name: "GitHub", user: "octo@example.com", host: "github.com", line: 2, value: "CANARY-import-bwpass-1"},
		{name: "GitHub", field: "API token", host: "github.com", line: 2, value: "CANARY-import-bwfield-2"},
		{name: "GitHub", field: "Uses 2FA", host: "github.com", line: 2, value: "true", kind: KindFlag},
		{name: "Recovery codes", line: 5, problem: problemNote},
		{name: `Quote "and" comma, inc`, host: "api.example.com", line: 6, problem: problemNoPassword},
		{name: `Quote "and" comma, inc`, field: "key", host: "api.example.com", line: 6, problem: problemFieldSplits},
		{name: "Router", user: "admin", line: 8, problem: problemNoPassword},
	})
	assertNoCanary(t, src, nil)
}

// 1Password 8's CSV export, with its byte order mark, a quoted title, a
// note over two lines and an item without a password.
func TestOnePasswordCSV(t *testing.T) {
	src, err := readFile(t, "onepassword.csv")
	if err != nil {
		t.Fatal(err)
	}
	if src.Format != FormatOnePasswordCSV {
		t.Fatalf("read as %s", src.Format)
	}
	check(t, src.Entries, []want{
		{name: "Spotify", user: "me@example.com", host: "accounts.spotify.com", line: 2, value: "CANARY-import-1p-1"},
		{name: "Multi, line", host: "api.example.org", line: 3, value: "CANARY-import-1p-2"},
		{name: "Wifi", line: 5, problem: problemNoPassword},
	})
	assertNoCanary(t, src, nil)
}

// Inputs that are refused whole say why without quoting them.
func TestRefusedInputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"too large", []byte(strings.Repeat("A="+canaryA+"\n", MaxInput/len("A="+canaryA+"\n")+1)), ErrTooLarge},
		{"too many", []byte(strings.Repeat("A=b\n", MaxEntries+1)), ErrTooMany},
		{"binary", []byte("A=" + canaryA + "\xff\xfe"), ErrNotText},
		{"NUL", []byte("A=" + canaryA + "\x00"), ErrNotText},
		{"a .1pux archive", append([]byte("PK\x03\x04"), canaryA...), ErrOnePUX},
		{"nothing", []byte(" \n\t# only a comment\n"), ErrEmpty},
		{"JSON that is not an export", []byte(`{"token":"` + canaryA + `"}`), ErrUnreadable},
		{"broken JSON", []byte("{\n\"items\": [\n{\"type\": 1, \"name\": \"" + canaryA + "\" \"x\"}]}"), ErrUnreadable},
		{"broken CSV", []byte("Title,Url,Username,Password\nA,b,c,\"" + canaryA + "\"x\n"), ErrUnreadable},
		{"an item of the wrong shape", []byte(`{"items":[{"type":"login","name":"` + canaryA + `"}]}`), ErrUnreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := Read(tc.in)
			if !errors.Is(err, tc.want) || src != nil {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			assertNoCanary(t, nil, err)
		})
	}
	var le *LineError
	_, err := Read([]byte("{\n\"items\": [\n{\"type\": 1},\n{\"type\": \"x\"}]}"))
	if !errors.As(err, &le) || le.Line != 4 {
		t.Fatalf("the line of the broken item: %v", err)
	}
}

// assertNoCanary fails when any text of src or err holds a canary: only
// the values may.
func assertNoCanary(t *testing.T, src *Source, err error) {
	t.Helper()
	var texts []string
	if err != nil {
		texts = append(texts, err.Error())
	}
	if src != nil {
		for _, e := range src.Entries {
			texts = append(texts, e.Name, e.Field, e.Username, e.Host, e.Problem, string(e.Kind), e.SuggestedName())
		}
	}
	for _, s := range texts {
		if strings.Contains(strings.ToUpper(s), "CANARY") {
			t.Fatalf("a text holds a value: %q", s)
		}
	}
}
