//go:build !windows

package audit

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncDir makes a rename or a new file in dir durable: on POSIX systems the
// directory entry is only on disk once the directory itself is fsynced.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("audit: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("audit: sync dir: %w", err)
	}
	return nil
}

// ErrLocked is returned by Open when another writer holds the log.
var ErrLocked = errors.New("audit: log is open in another process")

// lockFile takes an exclusive advisory lock on f, so two gateways can never
// interleave records in one log.
func lockFile(f *os.File) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return ErrLocked
		}
		return fmt.Errorf("audit: lock log: %w", err)
	}
	return nil
}
