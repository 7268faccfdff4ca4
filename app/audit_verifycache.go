package app

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// verifyCache verifies the log in the background and keeps the last result
// while its files look unchanged. Verify reads the whole log, which on a long
// log takes seconds, so the UI never waits for it: Status shows the last
// result (or "verifying" before the first) while a new one runs.
//
// The files' size, mtime and inode decide "unchanged", and a result is never
// older than maxAge, so an edit that keeps size and mtime is still found
// within maxAge. After a change a new verification starts at once, unless
// the last one finished less than gapFactor times its own duration ago: a
// log that grows all the time is then re-verified every few seconds (on a
// million entries), keeping verification to a small share of one core.
type verifyCache struct {
	maxAge time.Duration
	now    func() time.Time
	// done is called when a verification finishes (the UI reloads).
	done func()

	mu       sync.Mutex
	key      [2]fileStamp
	at       time.Time // when the last verification started
	finished time.Time
	took     time.Duration
	report   audit.Report
	valid    bool
	running  bool
	idle     chan struct{} // closed when no verification runs; for tests and close
}

// gapFactor: after a change, wait at least this many times the last
// verification's duration before verifying again.
const gapFactor = 10

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

func stamps(dir string) [2]fileStamp {
	return [2]fileStamp{stamp(filepath.Join(dir, audit.LogFile)), stamp(filepath.Join(dir, audit.CheckpointFile))}
}

// status returns the last result for dir, starting a new verification when
// the files changed or the result is too old. have is false before the
// first result.
func (c *verifyCache) status(dir string) (rep audit.Report, have bool) {
	key := stamps(dir)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := c.valid && c.key == key && now.Sub(c.at) < c.maxAge
	if !fresh && !c.running && (!c.valid || now.Sub(c.finished) >= gapFactor*c.took) {
		c.startLocked(dir, key, now)
	}
	return c.report, c.valid
}

// seed takes a verification made elsewhere (the writer's, of the log as
// Open found it) as the result to show until one of the files as they are
// now is done; it does not count as that one.
func (c *verifyCache) seed(rep audit.Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid {
		c.report, c.valid = rep, true
	}
}

func (c *verifyCache) startLocked(dir string, key [2]fileStamp, now time.Time) {
	c.running = true
	c.idle = make(chan struct{})
	idle := c.idle
	go func() {
		start := time.Now()
		rep := audit.Verify(filepath.Join(dir, audit.LogFile), audit.VerifyOptions{})
		c.mu.Lock()
		c.key, c.at, c.report, c.valid, c.running = key, now, rep, true, false
		c.finished, c.took = c.now(), time.Since(start)
		done := c.done
		c.mu.Unlock()
		close(idle)
		if done != nil {
			done()
		}
	}()
}

// wait returns once no verification runs.
func (c *verifyCache) wait() {
	c.mu.Lock()
	idle, running := c.idle, c.running
	c.mu.Unlock()
	if running {
		<-idle
	}
}

// settled reports whether the last result is for the files as they are and
// no verification runs.
func (c *verifyCache) settled(dir string) bool {
	key := stamps(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.valid && !c.running && c.key == key
}
