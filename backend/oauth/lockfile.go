package oauth

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/yettdev/yett/backend/filelock"
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
		locked, err := filelock.TryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("oauth: lock file: %w", err)
		}
		if locked {
			return func() {
				filelock.Unlock(f)
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
