//go:build !linux && !darwin && !windows

package notify

import "fmt"

// Open: this OS has no notification service Yett knows how to use.
func Open(Handlers, Options) (Notifier, error) {
	return nil, fmt.Errorf("%w: Yett has no notification support on this operating system", ErrUnavailable)
}
