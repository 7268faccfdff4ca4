//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/credimport"
	"github.com/yettdev/yett/backend/vault"
)

const importListCanary = "CANARY-import-list-5e0b"

// importSource is what a .env file with one entry that cannot be imported
// (the fourth, empty) reads as.
func importSource(t *testing.T) *credimport.Source {
	t.Helper()
	src, err := credimport.Read([]byte("A_TOKEN=" + importListCanary + "\nB_URL=https://b.example/\nB_KEY=x2\nEMPTY=\nC=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Wipe)
	return src
}

func TestParseChoice(t *testing.T) {
	src := importSource(t)
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "1", want: []int{0}},
		{in: "1,3-5", wantErr: "entry 4 cannot be imported: the value is empty"},
		{in: "1, 3 ,5", want: []int{0, 2, 4}},
		{in: "5,1-2,2", want: []int{0, 1, 4}},
		{in: "2-3 5", want: []int{1, 2, 4}},
		{in: "all", want: []int{0, 1, 2, 4}},
		{in: " ALL ", want: []int{0, 1, 2, 4}},
		{in: "", wantErr: errChooseNone.Error()},
		{in: "   ", wantErr: errChooseNone.Error()},
		{in: "0", wantErr: "there is no entry 0: they are numbered 1 to 5"},
		{in: "6", wantErr: "there is no entry 6"},
		{in: "3-1", wantErr: "3-1 counts down: write 1-3"},
		{in: "1-", wantErr: `"" is not an entry's number`},
		{in: "one", wantErr: `"one" is not an entry's number`},
		{in: "-2", wantErr: "is not an entry's number"},
		{in: "4", wantErr: "entry 4 cannot be imported"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseChoice(tc.in, src)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseChoice(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("parseChoice(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
	// all, with nothing that can be imported.
	empty := &credimport.Source{Entries: []credimport.Entry{{Name: "X", Problem: "the value is empty"}}}
	if _, err := parseChoice("all", empty); err == nil || errors.Is(err, errChooseNone) {
		t.Fatalf("all of nothing importable: %v", err)
	}
}

// TestImportListShowsNoValue: the list names each entry, what its value
// looks like and how long it is, the host it suggests, a name already
// taken and why an entry cannot be imported; never a value. Text from the
// file reaches the terminal through terminalSafe: an escape sequence or a
// bidirectional override in a name or a host is shown as its \u escape.
func TestImportListShowsNoValue(t *testing.T) {
	src := importSource(t)
	src.Entries = append(src.Entries, credimport.Entry{
		Name: "evil\x1b]0;owned\x07", Username: "ana\u202e", Host: "h\x1b[2J.example", Line: 9, Kind: credimport.KindText, Length: 4,
		Secret: vault.NewSecret([]byte(importListCanary)),
	})
	var b bytes.Buffer
	writeImportList(&b, src, map[string]bool{"b_key": true})
	out := b.String()
	for _, want := range []string{
		"1  A_TOKEN", "text, 23 characters", "none",
		"2  B_URL", "url, 18 characters",
		"3  B_KEY", "b.example; a credential already has this name",
		"4  EMPTY", "cannot be imported: the value is empty",
		"5  C", "number, 1 character",
		`evil\u001b]0;owned\u0007`, `ana\u202e`, `h\u001b[2J.example`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, importListCanary) || strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Fatalf("the list holds a value or a raw control character:\n%q", out)
	}
}

// TestImportArguments: what yett credential import refuses before it
// reads anything (exit 2, nothing created), and where FILE may be.
func TestImportArguments(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{args: nil, wantErr: "name the file"},
		{args: []string{"-"}, wantErr: "standard input is your terminal"},
		{args: []string{"a.env", "b.env"}, wantErr: "name one file"},
		{args: []string{"a.env", "--path", "A=/v1"}, wantErr: "--path goes with --host or --all"},
		{args: []string{"a.env", "--host", "api.example.com"}, wantErr: "--host is NAME=VALUE"},
		{args: []string{"a.env", "--host", "A="}, wantErr: "--host is NAME=VALUE"},
		{args: []string{"a.env", "--host", "A=https://api.example.com/x"}, wantErr: "--host A:"},
		{args: []string{"a.env", "--all", "--path", "A=v1"}, wantErr: "--path A:"},
		{args: []string{"a.env", "--approval", "always"}, wantErr: "--approval"},
		{args: []string{"a.env", "--environment", "prod"}, wantErr: "--environment"},
		{args: []string{"a.env", "--rotate-every", "-1"}, wantErr: "--rotate-every"},
		{args: []string{"a.env", "--inject", "header", "--header", "X-Key"}, wantErr: "--inject header takes"},
		{args: []string{"a.env", "--username", "ana"}, wantErr: "go with --inject header or basic"},
		{args: []string{"a.env", "--inject", "cookie"}, wantErr: "--inject is bearer, header or basic"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			_, err := parseImportArgs(env, tc.args)
			var ee *exitError
			if err == nil || !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("parseImportArgs(%q) = %v; want exit 2 with %q", tc.args, err, tc.wantErr)
			}
		})
	}
	for _, args := range [][]string{
		{"a.env", "--all", "--host", "My item=api.example.com", "--path", "My item=/v1"},
		{"--all", "a.env", "--approval", "per-call"},
		{"--approval", "writes", "--owner", "ana", "a.env"},
		{"--", "a.env"},
	} {
		var stderr bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &stderr, Stderr: &stderr, Getenv: func(string) string { return "" }}
		o, err := parseImportArgs(env, args)
		if err != nil || o.file != "a.env" {
			t.Errorf("parseImportArgs(%q) = %+v, %v", args, o, err)
		}
	}
	o, _ := parseImportArgs(&Env{Stderr: new(bytes.Buffer)}, []string{"a.env", "--host", "x=y=api.example.com", "--host", "x=y=b.example"})
	if got := o.hosts["x=y"]; !slices.Equal(got, []string{"api.example.com", "b.example"}) || !o.scripted() {
		t.Errorf("--host with '=' in the name: %v", o.hosts)
	}
}

// TestImportRefusesWithoutATerminalBeforeReading: in-process, with
// standard input not a terminal, the command refuses (exit 2) before it
// opens the file, which does not even exist here.
func TestImportRefusesWithoutATerminalBeforeReading(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	code := Run(context.Background(), env, []string{"credential", "import", "/nonexistent/a.env", "--all"})
	if code != 2 || !strings.Contains(stderr.String(), "from a person at a terminal") || strings.Contains(stderr.String(), "nonexistent") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
