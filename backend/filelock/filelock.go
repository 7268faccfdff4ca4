// Package filelock takes the one kind of file lock Yett uses: exclusive,
// without waiting, held by an open file and released by the kernel when
// the process dies (so a crash leaves no stale lock). It is flock(2) on
// Unix and LockFileEx on Windows.
//
// On Windows byte-range locks are mandatory: a locked byte cannot be read
// through another handle. The lock therefore covers one byte far past any
// real content (offset 2^62), so a locked file (the audit log) stays
// readable by the offline verifier and by backups.
package filelock

import "os"

// TryLock takes f's exclusive lock without waiting. false, nil: another
// open file (of this or another process) holds it.
func TryLock(f *os.File) (bool, error) { return tryLock(f) }

// Unlock releases f's lock; closing f releases it too.
func Unlock(f *os.File) { unlock(f) }
