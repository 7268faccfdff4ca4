//go:build !linux && !darwin && !windows

package lockwatch

import (
	"context"
	"errors"
)

func (w *Watcher) startOS(context.Context) error {
	return errors.New("sleep and screen-lock watching is not implemented on this OS")
}
