//go:build windows

package audit

import (
	"errors"
	"os"
)

// syncDir is a no-op on Windows: NTFS makes a completed rename durable with
// the file's own flush, and directories cannot be opened for FlushFileBuffers
// without backup privileges.
func syncDir(string) error { return nil }

// ErrLocked is returned by Open when another writer holds the log.
var ErrLocked = errors.New("audit: log is open in another process")

// lockFile relies on Windows' default share mode; the gateway's single
// instance lock is what keeps a second writer away there.
func lockFile(*os.File) error { return nil }
