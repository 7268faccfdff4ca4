package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/audit"
)

// indexCache keeps the Sessions and Activity index (activity.Index) and the
// key it is stored under, and only while the vault is unlocked: both are
// dropped at every lock (the index saved first, encrypted), so a locked app
// holds nothing decrypted from the log and no key that decrypts it. The
// vault's audit identity is not kept either: it is fetched for each read
// and used only to open the segment keys of entries not indexed yet.
//
// Each view brings the index up to date with the log first (only the new
// entries are decrypted) and then reads one page of it. A log too long to
// index within one view (the first unlock after an upgrade, or after the
// index file was lost) is indexed in the background; the views say so
// until it is done, and the app is told to reload them.
type indexCache struct {
	dir     string
	log     *slog.Logger
	changed func()        // tells the UI to reload the views
	budget  time.Duration // syncBudget unless a test sets it

	mu      sync.Mutex
	key     *activity.IndexKey
	x       *activity.Index
	saved   int64  // entries when the index was last saved
	note    string // why the views are incomplete, "" when they are not
	cancel  func() // stops the background indexing; nil when none runs
	working chan struct{}
}

// syncBudget is how long a view indexes new entries before it hands the
// rest to the background: long enough for everything a session adds, short
// enough that the view still answers at once.
const syncBudget = 150 * time.Millisecond

// saveEvery: besides at every lock, the index is saved once this many
// entries were added since the last save, so that a crash costs little
// re-indexing.
const saveEvery = 50_000

func (c *indexCache) syncBudget() time.Duration {
	if c.budget > 0 {
		return c.budget
	}
	return syncBudget
}

// read brings the index up to date with the log using id and calls f with
// it. note says why the index is incomplete. f runs under the cache's lock
// and must not keep the index.
func (c *indexCache) read(id *age.X25519Identity, f func(x *activity.Index, note string)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.loadLocked(id); err != nil {
		return err
	}
	if c.cancel == nil {
		if done := c.catchUpLocked(context.Background(), id, time.Now().Add(c.syncBudget())); !done {
			c.startBackgroundLocked(id)
		}
	}
	note := c.note
	if c.cancel != nil {
		note = fmt.Sprintf("The log is being indexed for these views: %d entries so far, the oldest first. The newest appear when it is done.", c.x.Entries())
	}
	f(c.x, note)
	return nil
}

// loadLocked derives the key and loads the saved index, or starts a new
// one. c.mu held.
func (c *indexCache) loadLocked(id *age.X25519Identity) error {
	if c.x != nil {
		return nil
	}
	logID, err := audit.ReadLogID(c.dir)
	if err != nil {
		return err
	}
	if c.key, err = activity.NewIndexKey(id, logID); err != nil {
		return err
	}
	x, err := activity.LoadIndex(c.dir, c.key)
	if err != nil {
		if !errors.Is(err, activity.ErrIndexUnusable) {
			c.log.Warn("audit index", "err", err)
		}
		x = activity.NewIndex()
	}
	c.x, c.saved, c.note = x, x.Entries(), ""
	return nil
}

// catchUpLocked adds the log's entries after the index's position until the
// log ends, ctx ends or deadline passes (zero: none), and reports whether it
// reached the end. c.mu held, or owned by the background indexing.
func (c *indexCache) catchUpLocked(ctx context.Context, id *age.X25519Identity, deadline time.Time) bool {
	path := filepath.Join(c.dir, audit.LogFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return true
	}
	for n := 0; ; {
		restart := false
		for e, err := range audit.ReadEventsFrom(path, id, c.x.Next()) {
			if errors.Is(err, audit.ErrBadPosition) && c.x.Entries() > 0 {
				// The index does not fit this log (it was replaced or
				// cut): index it again from the start.
				c.log.Warn("audit index does not match the log; rebuilding it", "err", err)
				c.x, c.saved, restart = activity.NewIndex(), 0, true
				break
			}
			if err != nil {
				c.note = fmt.Sprintf("Only the first %d entries could be read; the next one could not be decrypted or does not belong at its place.", c.x.Entries())
				c.log.Warn("reading audit log", "err", err)
				return true
			}
			c.x.Add(e)
			if n++; n%256 == 0 && (ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline))) {
				return false
			}
		}
		if !restart {
			break
		}
	}
	c.note = ""
	if err := c.x.Damaged(); err != nil {
		c.log.Warn("audit index damaged; rebuilding it", "err", err)
		c.x, c.saved = activity.NewIndex(), 0
		return c.catchUpLocked(ctx, id, deadline)
	}
	if c.x.Entries()-c.saved >= saveEvery {
		c.saveLocked()
	}
	return true
}

// startBackgroundLocked indexes the rest of the log on its own goroutine,
// a batch at a time so that views in between see its progress. It holds
// the identity until it is done or the vault locks (wipe stops it). c.mu
// held.
func (c *indexCache) startBackgroundLocked(id *age.X25519Identity) {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.working = cancel, make(chan struct{})
	done := c.working
	go func() {
		defer close(done)
		for {
			c.mu.Lock()
			if ctx.Err() != nil {
				c.mu.Unlock()
				return
			}
			finished := c.catchUpLocked(ctx, id, time.Now().Add(syncBudget))
			if finished {
				c.saveLocked()
				c.cancel = nil
			}
			c.mu.Unlock()
			if finished {
				c.changed()
				return
			}
		}
	}()
}

// saveLocked writes the index file; a failure costs re-indexing later,
// nothing else. c.mu held.
func (c *indexCache) saveLocked() {
	if c.x == nil || c.x.Entries() == c.saved {
		return
	}
	if err := c.x.Save(c.dir, c.key); err != nil {
		c.log.Warn("saving audit index", "err", err)
		return
	}
	c.saved = c.x.Entries()
}

// wipe stops any background indexing, saves the index encrypted and drops
// it and its key. The app calls it at every lock, at a vault reset and at
// exit.
func (c *indexCache) wipe() {
	c.mu.Lock()
	cancel, working := c.cancel, c.working
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-working
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.saveLocked()
	c.key.Wipe()
	c.key, c.x, c.cancel, c.note = nil, nil, nil, ""
}

// drop forgets the index without saving it: the log it indexed was set
// aside (the file went with it).
func (c *indexCache) drop() {
	c.mu.Lock()
	cancel, working := c.cancel, c.working
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-working
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key.Wipe()
	c.key, c.x, c.cancel, c.note = nil, nil, nil, ""
}
