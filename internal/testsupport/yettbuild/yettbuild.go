// Package yettbuild builds the yett command for tests the way the Makefile
// ships it: CGO_ENABLED=0, a static binary with Go's own resolver and user
// lookup. A test that measures or attacks `yett serve` or the shim then
// runs what users run, not a binary linked against libc.
package yettbuild

import (
	"os"
	"os/exec"
)

// Command is `go build args...` with the shipped build's environment.
func Command(args ...string) *exec.Cmd {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
