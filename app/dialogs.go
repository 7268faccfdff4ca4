package app

import (
	"context"
	"errors"

	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// fileDialogs ask the person for a file: where to save one, which backup
// to open, or which file to import credentials from. "" means they
// cancelled. The Wails ones need the window; a development build may
// answer them from a directory instead (see fileDialogsFor), so the
// browser end-to-end test can export, restore and import.
type fileDialogs struct {
	save       func(title, defaultName string) (string, error)
	open       func(title string) (string, error)
	openImport func(title string) (string, error)
}

func noDialogs() fileDialogs {
	none := errors.New("no window to show a dialog in")
	return fileDialogs{
		save:       func(string, string) (string, error) { return "", none },
		open:       func(string) (string, error) { return "", none },
		openImport: func(string) (string, error) { return "", none },
	}
}

// wailsDialogs shows the system's file dialogs over the window.
func wailsDialogs(ctx context.Context) fileDialogs {
	filters := []runtime.FileFilter{{DisplayName: "Yett backups (*" + backupExtension + ")", Pattern: "*" + backupExtension}}
	return fileDialogs{
		save: func(title, name string) (string, error) {
			return runtime.SaveFileDialog(ctx, runtime.SaveDialogOptions{Title: title, DefaultFilename: name, Filters: filters})
		},
		open: func(title string) (string, error) {
			return runtime.OpenFileDialog(ctx, runtime.OpenDialogOptions{Title: title, Filters: filters})
		},
		// A .env file is often named just ".env" or ".env.local", which no
		// pattern but "*" matches, so all files are offered too.
		openImport: func(title string) (string, error) {
			return runtime.OpenFileDialog(ctx, runtime.OpenDialogOptions{Title: title, Filters: []runtime.FileFilter{
				{DisplayName: ".env files and exports (*.env, *.csv, *.json)", Pattern: "*.env;*.csv;*.json"},
				{DisplayName: "All files", Pattern: "*"},
			}})
		},
	}
}

func (s *VaultService) setDialogs(d fileDialogs) {
	s.dialogMu.Lock()
	s.dialogs = d
	s.dialogMu.Unlock()
}

func (s *VaultService) fileDialogs() fileDialogs {
	s.dialogMu.Lock()
	defer s.dialogMu.Unlock()
	return s.dialogs
}
