//go:build unix

package app

import (
	"os"
	"syscall"
)

func inode(fi os.FileInfo) any {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	}
	return nil
}
