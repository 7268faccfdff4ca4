package selfprotect

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Harden gives this process no core file and refuses debuggers.
func Harden() error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0}); err != nil {
		return fmt.Errorf("selfprotect: no core files: %w", err)
	}
	if err := unix.PtraceDenyAttach(); err != nil {
		return fmt.Errorf("selfprotect: PT_DENY_ATTACH: %w", err)
	}
	return nil
}

// Hardened reports whether Harden took effect; macOS offers no way to read
// PT_DENY_ATTACH back, so it reports the core limit.
func Hardened() bool {
	var r unix.Rlimit
	return unix.Getrlimit(unix.RLIMIT_CORE, &r) == nil && r.Max == 0
}
