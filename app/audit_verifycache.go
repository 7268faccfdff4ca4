package app

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// verifyCache keeps the last verification of the log while its files look
// unchanged. Verify reads the whole log; the UI asks for the status every
// time the log grows (both the banner and the Activity view), which on a long
// log would keep a core busy. The files' size, mtime and inode decide
// "unchanged", and a result is never older than maxAge, so an edit that
// keeps size and mtime is still found within maxAge (Open's full check at
// every start is not affected).
type verifyCache struct {
	maxAge time.Duration
	now    func() time.Time

	mu     sync.Mutex
	key    [2]fileStamp
	at     time.Time
	report audit.Report
	valid  bool
}

type fileStamp struct {
	exists bool
	size   int64
	mtime  time.Time
	sys    any // platform file identity (inode on Unix)
}

func stamp(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{exists: true, size: fi.Size(), mtime: fi.ModTime(), sys: inode(fi)}
}

func (c *verifyCache) verify(dir string) audit.Report {
	key := [2]fileStamp{stamp(filepath.Join(dir, audit.LogFile)), stamp(filepath.Join(dir, audit.CheckpointFile))}
	now := c.now()
	c.mu.Lock()
	if c.valid && c.key == key && now.Sub(c.at) < c.maxAge {
		rep := c.report
		c.mu.Unlock()
		return rep
	}
	c.mu.Unlock()
	rep := audit.Verify(filepath.Join(dir, audit.LogFile), audit.VerifyOptions{})
	c.mu.Lock()
	c.key, c.at, c.report, c.valid = key, now, rep, true
	c.mu.Unlock()
	return rep
}
