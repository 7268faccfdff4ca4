//go:build !linux

package audit

// The crash and fail-closed tests use SIGKILL and mount(8): Linux only.
func maybeCrashChild() {}
