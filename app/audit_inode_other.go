//go:build !unix

package app

import "os"

// Windows reports no file identity through Stat; size, mtime and maxAge do.
func inode(os.FileInfo) any { return nil }
