// Package wintest holds what Yett's Windows tests need to run under Wine
// as well as on Windows.
package wintest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TempDir is t.TempDir for tests that run under Wine: Go 1.26 removes a
// directory tree with FILE_DISPOSITION_POSIX_SEMANTICS, which Wine 8 does
// not implement ("Invalid function"), so t.TempDir's own cleanup fails
// there. This one removes the files one by one (DeleteFile), then the
// directories, deepest first; what is left is an error.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "yett-wintest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var files, dirs []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			} else if err == nil {
				files = append(files, p)
			}
			return nil
		})
		for _, f := range files {
			os.Remove(f)
		}
		slices.Reverse(dirs)
		for _, d := range dirs {
			os.Remove(d)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("wintest: %s was not removed", dir)
		}
	})
	return dir
}
