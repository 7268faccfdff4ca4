//go:build unix

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var updateMan = flag.Bool("update-man", false, "rewrite build/linux/yett.1 from the commands' usage texts")

// manPath is the page the Linux packages install as yett(1).
const manPath = "../../build/linux/yett.1"

// manPage renders yett(1) from the usage texts, so the page says what
// yett -h says.
func manPage() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w(`.\" Generated from the yett commands' usage texts by`)
	w(`.\" go test ./cmd/yett -run TestManPage -update-man; do not edit.`)
	w(`.TH YETT 1 "" "Yett" "User Commands"`)
	w(".SH NAME")
	w(`yett \- Yett's command line: the MCP shim, the headless gateway and its setup, the audit verifier`)
	w(".SH SYNOPSIS")
	w(`.B yett`)
	w(`.I command`)
	w(`.RI [ arguments ]`)
	w(".br")
	w(`.B yett \-\-version`)
	w(".SH DESCRIPTION")
	w(`Yett stands between AI coding agents and the outside world. Agents never hold`)
	w(`an API key or OAuth token: those live in Yett's encrypted vault. An agent asks`)
	w(`Yett, over MCP, to act; Yett decides whether this agent process may do it now,`)
	w(`injects the credential itself, acts, and records it in a tamper-evident audit log.`)
	w(".PP")
	w(`The desktop app is`)
	w(`.BR yett-desktop (1).`)
	w(`On a server, or over SSH, everything it serves can be set up and served from`)
	w(`a terminal: a new user runs`)
	w(`.BR "yett init" ,`)
	w(`.BR "yett credential add" `)
	w(`and`)
	w(`.BR "yett serve" ,`)
	w(`and points the agent at`)
	w(`.BR "yett mcp" .`)
	w(".SH COMMANDS")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w(`.SS "yett %s"`, n)
		w("%s.", roff(upperFirst(commands[n].summary)))
		w(".PP")
		w(".nf")
		w(".RS 4")
		for _, line := range strings.Split(strings.TrimRight(commands[n].usage, "\n"), "\n") {
			w("%s", roffLine(line))
		}
		w(".RE")
		w(".fi")
	}
	w(".SH ENVIRONMENT")
	w(".TP")
	w(".B YETT_DATA_DIR")
	w(`Where Yett keeps its files; by default`)
	w(`.I $XDG_DATA_HOME/yett`)
	w(`or`)
	w(`.IR ~/.local/share/yett .`)
	w(".TP")
	w(".B YETT_RUNTIME_DIR")
	w(`Where the gateway's socket lives; by default under`)
	w(`.IR $XDG_RUNTIME_DIR .`)
	w(`Secrets are never read from the environment.`)
	w(".SH EXIT STATUS")
	w(`0 on success, 1 on failure, 2 on a usage error or when a command refuses to run`)
	w(`(no terminal of your own, the app or yett serve running).`)
	w(`.B yett audit verify`)
	w(`exits 1 when the log was tampered with and 2 when it cannot be read.`)
	w(".SH SEE ALSO")
	w(`.BR yett-desktop (1)`)
	return b.String()
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// roff escapes text for a man page: backslashes, and a line that would
// start with a control character.
func roff(s string) string { return strings.ReplaceAll(s, `\`, `\e`) }

func roffLine(s string) string {
	s = strings.ReplaceAll(roff(s), "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// TestManPage: the installed yett(1) is what the commands' usage texts
// render to, every command has a section, and each usage text is what the
// command prints.
func TestManPage(t *testing.T) {
	want := manPage()
	if *updateMan {
		if err := os.WriteFile(manPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(manPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is not what the usage texts render to: go test ./cmd/yett -run TestManPage -update-man", manPath)
	}
	for n := range commands {
		if commands[n].usage == "" {
			t.Errorf("yett %s has no usage text for the man page", n)
		}
	}
}

// TestREADMENamesEveryCommand: the README, which the man page's readers
// and the package's users start from, says how to use each command.
func TestREADMENamesEveryCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for n := range commands {
		if !regexp.MustCompile("`yett " + n + `\b`).Match(readme) {
			t.Errorf("README.md never shows `yett %s`", n)
		}
	}
	if !strings.Contains(string(readme), "yett --version") {
		t.Error("README.md never shows yett --version")
	}
}

// emptyHome is a home, data and runtime directory that do not exist yet,
// and an environment that names them and nothing else.
func emptyHome(t *testing.T) (data, run string, getenv func(string) string) {
	dir := t.TempDir()
	data, run = filepath.Join(dir, "data"), filepath.Join(dir, "run")
	return data, run, func(k string) string {
		switch k {
		case "YETT_DATA_DIR":
			return data
		case "YETT_RUNTIME_DIR", "XDG_RUNTIME_DIR":
			return run
		case "HOME":
			return dir
		}
		return ""
	}
}

// TestHelpOfEveryCommand: `yett help NAME` and `yett NAME --help` (and -h)
// print, on stdout, exactly the usage text the man page renders for NAME,
// and exit 0. Nothing else happens: with the data and runtime directories
// pointed at places that do not exist, nothing is created there.
func TestHelpOfEveryCommand(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			data, run, getenv := emptyHome(t)
			for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
				var stdout, stderr bytes.Buffer
				env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: getenv}
				code := Run(context.Background(), env, args)
				if code != 0 || stdout.String() != commands[name].usage || stderr.Len() != 0 {
					t.Errorf("yett %s: exit %d, stdout\n%s\nwant\n%s(stderr %q)", strings.Join(args, " "), code, stdout.String(), commands[name].usage, stderr.String())
				}
			}
			for _, d := range []string{data, run} {
				if _, err := os.Stat(d); err == nil {
					t.Errorf("yett %s --help created %s", name, d)
				}
			}
		})
	}
}

// A command that reads the vault, run before there is one, says so and
// leaves nothing behind: no data directory, no database, no runtime
// directory (yett init makes them).
func TestReadBeforeInitCreatesNothing(t *testing.T) {
	for _, args := range [][]string{
		{"credential", "list"}, {"credential", "show", "x"}, {"ssh-host", "list"}, {"mcp-server", "list"},
		{"accounts", "list"}, {"operation", "list"}, {"team", "status"}, {"witness", "key"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			data, run, getenv := emptyHome(t)
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: getenv}
			code := Run(context.Background(), env, args)
			if code == 0 || !strings.Contains(stderr.String(), "there is no vault yet: run yett init first") {
				t.Errorf("yett %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr.String())
			}
			for _, d := range []string{data, run} {
				if _, err := os.Stat(d); err == nil {
					t.Errorf("yett %s before yett init created %s", strings.Join(args, " "), d)
				}
			}
		})
	}
}
