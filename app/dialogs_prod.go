//go:build !dev

package app

import "context"

// fileDialogsFor: a production build always asks through the window.
func fileDialogsFor(ctx context.Context) fileDialogs { return wailsDialogs(ctx) }
