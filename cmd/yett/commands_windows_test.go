//go:build windows

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/yettdev/yett/internal/testsupport/wintest"
)

// TestTerminalCommandsOnWindows: the commands that read secrets and
// answers at a Unix terminal say at once, with exit code 2, that they are
// not available on Windows and what to use instead; nothing waits for
// input, and the help lists them as such.
func TestTerminalCommandsOnWindows(t *testing.T) {
	dir := wintest.TempDir(t)
	for _, args := range [][]string{{"serve"}, {"init"}, {"credential", "add"}, {"connect"}, {"accounts"}, {"operation", "list"}} {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string {
				if k == "LOCALAPPDATA" || k == "APPDATA" {
					return dir
				}
				return ""
			}}
		if code := Run(context.Background(), env, args); code != 2 {
			t.Errorf("yett %s: exit %d, want 2 (%s)", args[0], code, errb.String())
		}
		if msg := errb.String(); !strings.Contains(msg, "not available on Windows") || !strings.Contains(msg, "app") {
			t.Errorf("yett %s says %q", args[0], msg)
		}
	}
	var out bytes.Buffer
	Run(context.Background(), &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}, []string{"help"})
	if !strings.Contains(out.String(), "not available on Windows: use the app") {
		t.Errorf("help does not say which commands Windows lacks:\n%s", out.String())
	}
}
