package app

import (
	"bytes"
	"strings"
	"testing"
)

// TestDesktopCommandLine: --help and --version print and say to exit; any
// other arguments (none, --background) start the app as before.
func TestDesktopCommandLine(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out bytes.Buffer
		answered, code := CommandLine(args, &out)
		if !answered || code != 0 || !strings.HasPrefix(out.String(), "usage: yett-desktop [--background]") {
			t.Errorf("%v: answered %v code %d\n%s", args, answered, code, out.String())
		}
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out bytes.Buffer
		answered, code := CommandLine(args, &out)
		if !answered || code != 0 || !strings.HasPrefix(out.String(), "yett-desktop ") {
			t.Errorf("%v: answered %v code %d %q", args, answered, code, out.String())
		}
	}
	for _, args := range [][]string{nil, {"--background"}, {"--help", "x"}} {
		var out bytes.Buffer
		if answered, _ := CommandLine(args, &out); answered || out.Len() != 0 {
			t.Errorf("%v was answered: %q", args, out.String())
		}
	}
}
