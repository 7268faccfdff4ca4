//go:build dev

package app

import (
	"context"
	"os"
	"path/filepath"
	"sort"
)

// fileDialogsFor: a development build with YETT_DEV_DIALOG_DIR set answers
// file dialogs from that directory without showing them (a browser driving
// the dev server cannot reach a native dialog): "save" names the file there,
// "open" picks the newest backup there, "openImport" the newest file whose
// name starts with "import". Only for throwaway vaults, like everything a
// dev build does.
func fileDialogsFor(ctx context.Context) fileDialogs {
	dir := os.Getenv("YETT_DEV_DIALOG_DIR")
	if dir == "" {
		return wailsDialogs(ctx)
	}
	return fileDialogs{
		save:       func(_, name string) (string, error) { return filepath.Join(dir, name), nil },
		open:       func(string) (string, error) { return newestIn(dir, "*"+backupExtension) },
		openImport: func(string) (string, error) { return newestIn(dir, "import*") },
	}
}

// newestIn is the newest file in dir matching pattern ("" when none).
func newestIn(dir, pattern string) (string, error) {
	found, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(found) == 0 {
		return "", err
	}
	sort.Slice(found, func(i, j int) bool {
		a, _ := os.Stat(found[i])
		b, _ := os.Stat(found[j])
		return a != nil && b != nil && a.ModTime().After(b.ModTime())
	})
	return found[0], nil
}
