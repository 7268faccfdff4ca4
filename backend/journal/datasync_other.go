//go:build !linux

package journal

import "os"

func dataSync(f *os.File) error { return f.Sync() }
