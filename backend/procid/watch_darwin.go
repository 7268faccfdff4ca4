package procid

import (
	"context"

	"golang.org/x/sys/unix"
)

// WatchExit returns a channel closed when the process of rec exits (or is
// found to be another process already), or when ctx is done; check
// ctx.Err() to tell which. It waits in kqueue for NOTE_EXIT; an EVFILT_USER
// event wakes it on cancellation.
func WatchExit(ctx context.Context, rec *RunRecord) <-chan struct{} {
	done := make(chan struct{})
	kq, err := unix.Kqueue()
	if err != nil {
		go watchPoll(ctx, rec, done)
		return done
	}
	changes := []unix.Kevent_t{
		{Ident: uint64(rec.PID), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT},
		{Ident: 1, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR},
	}
	if _, err := unix.Kevent(kq, changes, nil, nil); err != nil {
		unix.Close(kq)
		close(done) // ESRCH: already gone
		return done
	}
	// Registered on whatever process has the pid now: only a matching
	// start time says it is ours.
	if info, err := readProc(rec.PID); err != nil || info.startKey != rec.StartKey {
		unix.Close(kq)
		close(done)
		return done
	}
	stop := context.AfterFunc(ctx, func() {
		trigger := []unix.Kevent_t{{Ident: 1, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}}
		unix.Kevent(kq, trigger, nil, nil)
	})
	go func() {
		defer close(done)
		defer unix.Close(kq)
		defer stop()
		events := make([]unix.Kevent_t, 1)
		for {
			n, err := unix.Kevent(kq, nil, events, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n > 0 {
				return
			}
		}
	}()
	return done
}
