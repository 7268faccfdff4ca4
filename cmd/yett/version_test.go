package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yettdev/yett/internal/testsupport/yettbuild"
)

// TestVersionStamped: the Makefile's stamp (the number from VERSION and the
// commit) is what yett --version prints; the test binary's own build is
// unstamped and says devel.
func TestVersionStamped(t *testing.T) {
	raw, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(raw))
	bin := filepath.Join(t.TempDir(), "yett")
	ld := "-X github.com/yettdev/yett/backend/version.number=" + v + " -X github.com/yettdev/yett/backend/version.commit=0123456789ab"
	if out, err := yettbuild.Command("-ldflags", ld, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, arg := range []string{"--version", "version"} {
		out, err := exec.Command(bin, arg).Output()
		if want := "yett " + v + " (commit 0123456789ab)\n"; err != nil || string(out) != want {
			t.Errorf("yett %s: %q %v, want %q", arg, out, err, want)
		}
	}
	if out, _ := exec.Command(yettBin, "--version").Output(); string(out) != "yett devel\n" {
		t.Errorf("the unstamped build says %q", out)
	}
}
