//go:build darwin && !cgo

package lockwatch

import (
	"context"
	"errors"
)

// startOS cannot reach AppKit without cgo; the desktop app is always built
// with cgo on macOS, so this is only hit by a CGO_ENABLED=0 build.
func (w *Watcher) startOS(context.Context) error {
	return errors.New("sleep and screen-lock watching on macOS is not available without cgo (build with CGO_ENABLED=1)")
}
