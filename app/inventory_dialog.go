package app

import (
	"context"

	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// inventorySaveDialog asks where to save an inventory or drill export. A
// development build answers it from YETT_DEV_DIALOG_DIR when that is set
// (devSaveDir), as it does the backup dialogs, so the browser end-to-end
// test can export.
func inventorySaveDialog(ctx context.Context) func(title, name string) (string, error) {
	if save := devSaveDir(); save != nil {
		return save
	}
	return func(title, name string) (string, error) {
		return runtime.SaveFileDialog(ctx, runtime.SaveDialogOptions{Title: title, DefaultFilename: name})
	}
}
