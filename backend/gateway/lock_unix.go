//go:build unix

package gateway

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// takeLock holds an exclusive flock on path for the gateway's lifetime. The
// kernel drops it when the process dies, so a crash leaves no stale lock.
func takeLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("gateway: lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrAlreadyRunning
		}
		return nil, fmt.Errorf("gateway: lock: %w", err)
	}
	return f, nil
}

func releaseLock(f *os.File) {
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	f.Close()
}
