package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
)

// Verification is where the full verification of a log opened for appending
// stands (Log.Verification).
type Verification struct {
	// Running: Open trusted the signed tree state and checked only the
	// records after it, and the whole log is being read in the background.
	// Appends are accepted meanwhile.
	Running bool
	// Report is the full verification of every record that was in the log
	// when Open returned, once it is done (or Open's own, when Open read
	// the whole log itself). A tampered or unreadable result has already
	// stopped the log: every later Append fails.
	Report Report
}

// backgroundCheck is the full verification Open leaves running.
type backgroundCheck struct {
	done chan struct{}
	stop atomic.Bool
}

// errStopped ends a background verification when the log is closed.
var errStopped = errors.New("audit: verification stopped: log closed")

// stoppable is a reader that fails once stop is set.
type stoppable struct {
	r    io.Reader
	stop *atomic.Bool
}

func (s stoppable) Read(b []byte) (int, error) {
	if s.stop.Load() {
		return 0, errStopped
	}
	return s.r.Read(b)
}

// verifyInBackground verifies the first size bytes of the log (every record
// Open found) against the checkpoint text Open read, and requires that they
// give exactly the head Open trusted. A failure stops the log the way a
// failed verification at Open refuses it, and removes the tree state so that
// the next Open verifies everything before it appends anything.
func (l *Log) verifyInBackground(size int64, cpText []byte, head Head) {
	bg := &backgroundCheck{done: make(chan struct{})}
	l.bg = bg
	go func() {
		defer close(bg.done)
		rep := l.verifyPrefix(bg, size, cpText, head)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.verification = Verification{Report: rep}
		if rep.Status == StatusIntact || errors.Is(rep.Err, errStopped) {
			return
		}
		if l.broken == nil {
			if rep.Status == StatusTampered {
				l.broken = fmt.Errorf("%w: %w", ErrTampered, rep.Err)
			} else {
				l.broken = fmt.Errorf("%w: verifying the log: %w", ErrBroken, rep.Err)
			}
		}
		l.endSegmentLocked()
		os.Remove(filepath.Join(l.dir, TreeStateFile))
		l.cond.Broadcast()
	}()
}

func (l *Log) verifyPrefix(bg *backgroundCheck, size int64, cpText []byte, head Head) Report {
	rep := Report{FirstBad: -1, FirstBadOffset: -1}
	f, err := os.Open(filepath.Join(l.dir, LogFile))
	if err != nil {
		rep.unreadable(err)
		return rep
	}
	defer f.Close()
	r := stoppable{r: io.NewSectionReader(f, 0, size), stop: &bg.stop}
	res := verifyStream(r, size, cpText, l.key.vkey, nil, rep)
	rep = res.Report
	if rep.Status == StatusIntact && (res.Torn != nil || rep.Head != head) {
		rep.tamper(-1, -1, fmt.Errorf("%w: the records Open found give %s, the tree state it trusted gives %s", ErrCheckpointMismatch, rep.Head, head))
	}
	return rep
}

// Verification says whether the full verification of the log is still
// running and, once it is done, its result. See Verification.
func (l *Log) Verification() Verification {
	if l.bg != nil {
		select {
		case <-l.bg.done:
		default:
			return Verification{Running: true}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.verification
}

// Verified is closed once the full verification is done (at once when Open
// verified the whole log itself).
func (l *Log) Verified() <-chan struct{} {
	if l.bg == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return l.bg.done
}

// stopBackground stops a running verification and waits for it.
func (l *Log) stopBackground() {
	if l.bg != nil {
		l.bg.stop.Store(true)
		<-l.bg.done
	}
}
