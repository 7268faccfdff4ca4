package credimport

import (
	"strings"
	"testing"
)

// canary values: recognisable, so a leak is found by searching for them.
const (
	canaryA = "CANARY-import-a1b2c3"
	canaryB = "CANARY-import-d4e5f6"
)

// want is what a test expects of one entry.
type want struct {
	name, field, user, host string
	line                    int
	value                   string // when importable
	problem                 string // when not
	kind                    Kind
}

func check(t *testing.T, got []Entry, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		e := got[i]
		if e.Name != w.name || e.Field != w.field || e.Username != w.user || e.Host != w.host || e.Line != w.line {
			t.Errorf("entry %d: name %q field %q user %q host %q line %d, want %q %q %q %q %d",
				i, e.Name, e.Field, e.Username, e.Host, e.Line, w.name, w.field, w.user, w.host, w.line)
		}
		if e.Problem != w.problem {
			t.Errorf("entry %d (%s): problem %q, want %q", i, e.Name, e.Problem, w.problem)
		}
		if w.problem == "" && string(e.Secret.Bytes()) != w.value {
			t.Errorf("entry %d (%s): the value read is not the one written", i, e.Name)
		}
		if w.problem != "" && e.Secret.Len() != 0 {
			t.Errorf("entry %d (%s): a refused entry keeps its value", i, e.Name)
		}
		if w.kind != "" && e.Kind != w.kind {
			t.Errorf("entry %d (%s): kind %q, want %q", i, e.Name, e.Kind, w.kind)
		}
	}
}

func TestEnvValues(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []want
	}{
		{"plain", "TOKEN=" + canaryA + "\n", []want{{name: "TOKEN", line: 1, value: canaryA, kind: KindText}}},
		{"export, spaces around =", "export  TOKEN = " + canaryA + "  \n", []want{{name: "TOKEN", line: 1, value: canaryA}}},
		{"comments and blank lines", "# a comment\n\n   # indented\nTOKEN=" + canaryA, []want{{name: "TOKEN", line: 4, value: canaryA}}},
		{"CRLF", "A=" + canaryA + "\r\nB=" + canaryB + "\r\n", []want{{name: "A", line: 1, value: canaryA}, {name: "B", line: 2, value: canaryB}}},
		{"lone CR", "A=" + canaryA + "\rB=" + canaryB, []want{{name: "A", line: 1, value: canaryA}, {name: "B", line: 2, value: canaryB}}},
		{"inline comment after a blank", "A=" + canaryA + " # the staging key", []want{{name: "A", line: 1, value: canaryA}}},
		{"# inside a value is kept", "A=" + canaryA + "#x", []want{{name: "A", line: 1, value: canaryA + "#x"}}},
		{"a value starting with #", "A=#" + canaryA, []want{{name: "A", line: 1, value: "#" + canaryA}}},
		{"a comment where the value would be", "A= # nothing yet", []want{{name: "A", line: 1, problem: problemEmpty, kind: KindEmpty}}},
		{"empty", "A=\n", []want{{name: "A", line: 1, problem: problemEmpty, kind: KindEmpty}}},
		{"blanks in quotes are no value", "A=\" \t \"\nB=' '", []want{{name: "A", line: 1, problem: problemEmpty, kind: KindEmpty}, {name: "B", line: 2, problem: problemEmpty, kind: KindEmpty}}},
		{"single quotes are literal", `A='` + canaryA + ` $x\n #y'`, []want{{name: "A", line: 1, value: canaryA + ` $x\n #y`}}},
		{"single quotes escape \\ and '", `A='it\'s \\ \t'`, []want{{name: "A", line: 1, value: `it's \ \t`}}},
		{"double quotes", `A="` + canaryA + ` \"q\" \\ \t \x" # c`, []want{{name: "A", line: 1, value: canaryA + " \"q\" \\ \t \\x"}}},
		{"backticks are literal", "A=`" + canaryA + ` \"` + "`", []want{{name: "A", line: 1, value: canaryA + ` \"`}}},
		{"quoted spaces are kept", `A="  ` + canaryA + `  "`, []want{{name: "A", line: 1, value: "  " + canaryA + "  "}}},
		{"an escaped line break", `A="` + canaryA + `\n"`, []want{{name: "A", line: 1, problem: problemLineBreak}}},
		{"a value over several lines, and the line after it", "KEY=\"-----BEGIN\n" + canaryA + "\n-----END\"\nB=" + canaryB,
			[]want{{name: "KEY", line: 1, problem: problemMultiLine}, {name: "B", line: 4, value: canaryB}}},
		{"a quote never closed", "A=\"" + canaryA + "\nB=" + canaryB,
			[]want{{name: "A", line: 1, problem: problemUnclosed}, {name: "B", line: 2, value: canaryB}}},
		{"text after the closing quote", `A="` + canaryA + `"tail`, []want{{name: "A", line: 1, problem: problemAfter}}},
		{"a reference", "A=${HOME}/" + canaryA + "\nB=\"x${B_1}\"\nC='${NOT_EXPANDED}'\nD=$5{}",
			[]want{{name: "A", line: 1, problem: problemReference}, {name: "B", line: 2, problem: problemReference},
				{name: "C", line: 3, value: "${NOT_EXPANDED}"}, {name: "D", line: 4, value: "$5{}"}}},
		{"a bare secret has no name", canaryA + "\nB=" + canaryB,
			[]want{{line: 1, problem: problemNotKeyVal, kind: KindUnknown}, {name: "B", line: 2, value: canaryB}}},
		{"a name that is not a variable", "my key=" + canaryA + "\n=" + canaryB,
			[]want{{line: 1, problem: problemNotKeyVal}, {line: 2, problem: problemBadKey}}},
		{"an AWS credentials file: its section is not KEY=value", "[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = " + canaryA,
			[]want{{line: 1, problem: problemNotKeyVal}, {name: "aws_access_key_id", line: 2, value: "AKIAEXAMPLE"},
				{name: "aws_secret_access_key", line: 3, value: canaryA}}},
		{"YAML style is not KEY=value", "A: " + canaryA, []want{{line: 1, problem: problemNotKeyVal}}},
		{"the last line wins", "A=" + canaryA + "\nB=1\nA=" + canaryB,
			[]want{{name: "A", line: 1, problem: problemSetAgain(3)}, {name: "B", line: 2, value: "1", kind: KindNumber}, {name: "A", line: 3, value: canaryB}}},
		{"kinds", "F=true\nN=-4.5\nU=https://example.com/x\nE=''",
			[]want{{name: "F", line: 1, value: "true", kind: KindFlag}, {name: "N", line: 2, value: "-4.5", kind: KindNumber},
				{name: "U", line: 3, value: "https://example.com/x", kind: KindURL}, {name: "E", line: 4, problem: problemEmpty}}},
		{"too long", "A=" + strings.Repeat("x", 16<<10+1), []want{{name: "A", line: 1, problem: problemTooLong}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := Read([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if src.Format != FormatEnv {
				t.Fatalf("read as %s", src.Format)
			}
			check(t, src.Entries, tc.want)
			assertNoCanary(t, src, nil)
		})
	}
}

// Hosts: a sibling's URL (same name up to the first _) names the host,
// the URL's user info and path are not read into it, and a well-known
// variable gets its provider's API host when no sibling says otherwise.
func TestEnvHosts(t *testing.T) {
	in := strings.Join([]string{
		"JIRA_URL=https://" + canaryB + "@acme.atlassian.net/rest?key=" + canaryB,
		"JIRA_TOKEN=" + canaryA,
		"GITHUB_TOKEN=" + canaryA,
		"OPENAI_API_KEY=" + canaryA,
		"OPENAI_BASE_URL=http://127.0.0.1:8080/v1",
		"TWO_A=https://one.example.com",
		"TWO_B=https://two.example.com",
		"TWO_TOKEN=" + canaryA,
		"DB_URL=postgres://u:" + canaryB + "@db.internal/x",
		"DB_PASSWORD=" + canaryA,
	}, "\n")
	src, err := Read([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{}
	for _, e := range src.Entries {
		hosts[e.Name] = e.Host
	}
	for name, want := range map[string]string{
		"JIRA_TOKEN": "acme.atlassian.net", "JIRA_URL": "", "GITHUB_TOKEN": "api.github.com",
		"OPENAI_API_KEY": "127.0.0.1:8080", "TWO_TOKEN": "", "DB_PASSWORD": "",
	} {
		if hosts[name] != want {
			t.Errorf("%s: host %q, want %q", name, hosts[name], want)
		}
	}
	assertNoCanary(t, src, nil)
}
