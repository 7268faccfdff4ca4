//go:build dev

package app

import (
	"os"
	"path/filepath"
)

// devSaveDir: a development build with YETT_DEV_DIALOG_DIR set saves
// exports there under their default names, without a dialog.
func devSaveDir() func(title, name string) (string, error) {
	dir := os.Getenv("YETT_DEV_DIALOG_DIR")
	if dir == "" {
		return nil
	}
	return func(_, name string) (string, error) { return filepath.Join(dir, name), nil }
}
