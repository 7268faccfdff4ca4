package gateway

import (
	"fmt"
	"os"

	"github.com/yettdev/yett/backend/filelock"
)

// takeLock holds an exclusive lock on path for the gateway's lifetime. The
// kernel drops it when the process dies, so a crash leaves no stale lock.
func takeLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("gateway: lock: %w", err)
	}
	locked, err := filelock.TryLock(f)
	if err != nil || !locked {
		f.Close()
		if err == nil {
			return nil, ErrAlreadyRunning
		}
		return nil, fmt.Errorf("gateway: lock: %w", err)
	}
	return f, nil
}

func releaseLock(f *os.File) {
	filelock.Unlock(f)
	f.Close()
}
