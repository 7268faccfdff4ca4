//go:build windows

package filelock

import "testing"

// TestLockOnWindows is the lock test in the Windows layer (wine.sh runs the
// tests of *_windows_test.go files).
func TestLockOnWindows(t *testing.T) { TestLockIsExclusiveAndKeepsTheFileReadable(t) }
