package procid

import (
	"context"
	"time"
)

// pollInterval is how often the fallback exit watch re-reads the process.
const pollInterval = 50 * time.Millisecond

// watchPoll is the exit watch of last resort: it re-reads the process's
// start stamp until it is gone or different.
func watchPoll(ctx context.Context, rec *RunRecord, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		if info, err := readProc(rec.PID); err != nil || info.startKey != rec.StartKey {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
