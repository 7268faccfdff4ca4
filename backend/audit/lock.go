package audit

import (
	"errors"
	"fmt"
	"os"

	"github.com/yettdev/yett/backend/filelock"
)

// ErrLocked is returned by Open when another writer holds the log.
var ErrLocked = errors.New("audit: log is open in another process")

// lockFile takes an exclusive lock on f, so two writers can never
// interleave records in one log (on Windows too, where the lock leaves the
// log readable: see backend/filelock).
func lockFile(f *os.File) error {
	locked, err := filelock.TryLock(f)
	if err != nil {
		return fmt.Errorf("audit: lock log: %w", err)
	}
	if !locked {
		return ErrLocked
	}
	return nil
}
