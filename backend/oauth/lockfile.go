package oauth

import (
	"context"
	"fmt"
	"os"
	"time"
)

// lockFile takes an exclusive lock on path (flock on Unix, LockFileEx on
// Windows), waiting until ctx ends. The kernel drops it when the process
// dies, so a killed refresher never leaves the lock held.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("oauth: lock file: %w", err)
	}
	for {
		locked, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("oauth: lock file: %w", err)
		}
		if locked {
			return func() {
				unlockFile(f)
				f.Close()
			}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
