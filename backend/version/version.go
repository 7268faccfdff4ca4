// Package version says which Yett a binary is. The number has one source,
// the repository's VERSION file: the Makefile stamps it (and the commit)
// into both binaries at link time, and the package names are made from the
// same file. A binary built without the Makefile says "devel", so an
// unstamped build never passes for a release.
package version

import "strings"

// Set with -ldflags "-X github.com/yettdev/yett/backend/version.number=...
// -X github.com/yettdev/yett/backend/version.commit=...".
var (
	number = ""
	commit = ""
)

// Number is the stamped version ("0.1.0"), or "devel".
func Number() string {
	if n := strings.TrimSpace(number); n != "" {
		return n
	}
	return "devel"
}

// Commit is the stamped source commit, "" when none was stamped.
func Commit() string { return strings.TrimSpace(commit) }

// String is what `yett --version` prints and the About page shows:
// "0.1.0 (commit 1f0ba67c9e2a)", or just the number.
func String() string {
	if c := Commit(); c != "" {
		return Number() + " (commit " + c + ")"
	}
	return Number()
}
