//go:build unix

package userdir

import (
	"fmt"
	"os"
	"syscall"
)

// userRuntimeDir is /run/user/UID when it is a directory this user owns
// and nobody else may enter (how systemd-logind makes it); ok=false
// otherwise. A test replaces it.
var userRuntimeDir = func() (string, bool) {
	return privateDir(fmt.Sprintf("/run/user/%d", os.Getuid()))
}

// privateDir reports whether dir is a real directory (not a link) owned by
// this user with no permission for group or others.
func privateDir(dir string) (string, bool) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		return "", false
	}
	return dir, true
}
