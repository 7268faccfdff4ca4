package hydratest

import "syscall"

// dieWithParent makes the kernel kill Hydra when the test process dies
// without running its cleanups (a panic, a test timeout). Strictly, the
// signal comes when the OS thread that started Hydra exits; Go ends threads
// only after LockOSThread, which nothing here calls.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
