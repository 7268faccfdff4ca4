//go:build !linux

package hydratest

import "syscall"

// dieWithParent has no portable equivalent outside Linux: there, Hydra
// outlives a test process that dies without running its cleanups.
func dieWithParent() *syscall.SysProcAttr { return nil }
