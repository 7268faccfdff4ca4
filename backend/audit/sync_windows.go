//go:build windows

package audit

// syncDir is a no-op on Windows: NTFS makes a completed rename durable with
// the file's own flush, and directories cannot be opened for FlushFileBuffers
// without backup privileges.
func syncDir(string) error { return nil }
