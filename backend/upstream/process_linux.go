package upstream

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the server in a process group of its own, so stopping
// it stops what it started too (npx starts node, node may start more), and
// has the kernel kill it if Yett dies without stopping it: a server
// holding a secret does not outlive the process that lent it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
