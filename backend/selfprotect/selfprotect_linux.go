package selfprotect

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Harden makes this process non-dumpable and gives it no core file.
func Harden() error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0}); err != nil {
		return fmt.Errorf("selfprotect: no core files: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("selfprotect: PR_SET_DUMPABLE: %w", err)
	}
	return nil
}

// Hardened reports whether Harden took effect on this process.
func Hardened() bool {
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && d == 0
}
