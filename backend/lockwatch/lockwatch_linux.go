package lockwatch

import (
	"context"
	"errors"
)

// startOS watches logind on the system bus and screensavers on the session
// bus. Each failure is logged and returned joined; Start decides whether
// anything is left.
func (w *Watcher) startOS(ctx context.Context) error {
	var errs []error
	for _, watch := range []func(context.Context) error{w.watchLogin1, w.watchScreenSavers} {
		if err := watch(ctx); err != nil {
			w.log.Info("lockwatch: source unavailable", "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
