//go:build !windows

package audit

import (
	"fmt"
	"os"
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
