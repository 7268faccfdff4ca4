package procid

import (
	"context"

	"golang.org/x/sys/windows"
)

// WatchExit returns a channel closed when the process of rec exits (or is
// found to be another process already), or when ctx is done; check
// ctx.Err() to tell which. It waits on the process handle together with an
// event set on cancellation.
func WatchExit(ctx context.Context, rec *RunRecord) <-chan struct{} {
	done := make(chan struct{})
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(rec.PID))
	if err != nil {
		close(done)
		return done
	}
	// The handle pins whatever process has the pid now; only a matching
	// creation time says it is ours.
	if info, err := procTimes(h, rec.PID); err != nil || info.startKey != rec.StartKey {
		windows.CloseHandle(h)
		close(done)
		return done
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(h)
		go watchPoll(ctx, rec, done)
		return done
	}
	stop := context.AfterFunc(ctx, func() { windows.SetEvent(ev) })
	go func() {
		defer close(done)
		defer windows.CloseHandle(h)
		defer windows.CloseHandle(ev)
		defer stop()
		windows.WaitForMultipleObjects([]windows.Handle{h, ev}, false, windows.INFINITE)
	}()
	return done
}
