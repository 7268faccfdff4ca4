//go:build windows

package selfprotect

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/windows"
)

// TestHelperHardenedWindows is the child of TestHardenOnWindows: it
// hardens itself and reports whether the DACL reads back as set.
func TestHelperHardenedWindows(t *testing.T) {
	if os.Getenv("YETT_SELFPROTECT_CHILD") != "1" {
		return
	}
	if Hardened() {
		os.Exit(3) // hardened before Harden
	}
	if err := Harden(); err != nil {
		os.Exit(4)
	}
	if !Hardened() {
		os.Exit(5)
	}
	os.Exit(0)
}

// TestHardenOnWindows: Harden sets the process DACL that leaves the user's
// other processes only terminate, query-limited, read-control and
// synchronize, and Hardened reads it back. It runs in a child, so the test
// process keeps its own DACL. (That Windows then refuses
// PROCESS_VM_READ to the user's other processes needs Windows: Wine does
// not enforce process DACLs; docs/windows.md.)
func TestHardenOnWindows(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^TestHelperHardenedWindows$")
	child.Env = append(os.Environ(), "YETT_SELFPROTECT_CHILD=1")
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("hardened child: %v\n%s", err, out)
	}
	if _, err := windows.SecurityDescriptorFromString(processSDDL); err != nil {
		t.Fatalf("the SDDL does not parse: %v", err)
	}
}
