//go:build !linux && !darwin && !windows

package selfprotect

// Harden does nothing on this OS; Yett is built for Linux, macOS and
// Windows.
func Harden() error { return nil }

// Hardened is false: nothing was done.
func Hardened() bool { return false }
