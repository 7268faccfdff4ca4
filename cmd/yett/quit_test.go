package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/instance"
)

// `yett quit` asks the app holding the user's lock to quit and says so;
// with no app running it says that instead, and succeeds.
func TestQuit(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "YETT_RUNTIME_DIR" {
			return dir
		}
		return ""
	}}
	if code := Run(context.Background(), env, []string{"quit"}); code != 0 || !strings.Contains(out.String(), "not running") {
		t.Fatalf("nothing running: code %d, %q %q", code, out.String(), errb.String())
	}
	p, err := instance.Acquire(dir, "app", nil)
	if err != nil {
		t.Fatal(err)
	}
	quit := make(chan struct{})
	p.OnQuit(func() { p.Release(); close(quit) })
	out.Reset()
	if code := Run(context.Background(), env, []string{"quit"}); code != 0 || !strings.Contains(out.String(), "quit") {
		t.Fatalf("code %d, %q %q", code, out.String(), errb.String())
	}
	<-quit
	if code := Run(context.Background(), env, []string{"quit", "now"}); code != 2 {
		t.Fatalf("extra argument: code %d", code)
	}
}
