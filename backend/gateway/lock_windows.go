//go:build windows

package gateway

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// takeLock holds an exclusive byte-range lock on path for the gateway's
// lifetime, the Windows counterpart of flock: the kernel releases it when
// the process dies, so a crash leaves no stale lock.
func takeLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("gateway: lock: %w", err)
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, ErrAlreadyRunning
		}
		return nil, fmt.Errorf("gateway: lock: %w", err)
	}
	return f, nil
}

func releaseLock(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
	f.Close()
}
