//go:build darwin && !cgo

package notify

import "fmt"

// Open cannot reach UNUserNotificationCenter without cgo; the desktop app
// is always built with cgo on macOS, so this is only hit by a CGO_ENABLED=0
// build (the yett CLI).
func Open(Handlers, Options) (Notifier, error) {
	return nil, fmt.Errorf("%w: notifications on macOS need a build with cgo (the desktop app is one)", ErrUnavailable)
}
