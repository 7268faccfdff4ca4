package procid

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// forceNoPidfdOpen makes WatchExit use the /proc polling fallback, as on
// kernels before 5.3; tests use it to cover that path.
var forceNoPidfdOpen = false

// WatchExit returns a channel closed when the process of rec exits (or is
// found to be another process already), or when ctx is done; check
// ctx.Err() to tell which. An exec does not close it: Matches catches that.
//
// It waits on a pidfd through the runtime's poller (a pidfd becomes
// readable when its process exits), so no thread is held per watched
// process; where pidfd_open is missing it re-reads /proc every 50 ms.
func WatchExit(ctx context.Context, rec *RunRecord) <-chan struct{} {
	done := make(chan struct{})
	// The record's own pidfd names its process already; a copy of it
	// needs no start-stamp check.
	pidfd := rec.live.dupPidfd()
	if pidfd < 0 && !forceNoPidfdOpen {
		if fd, err := unix.PidfdOpen(rec.PID, unix.PIDFD_NONBLOCK); err == nil {
			// The pidfd pins whatever process has the pid now; only after
			// checking the start stamp do we know it is ours.
			if info, err := readProc(rec.PID); err != nil || info.startKey != rec.StartKey {
				unix.Close(fd)
				close(done)
				return done
			}
			pidfd = fd
		}
	}
	if pidfd >= 0 {
		go watchPidfd(ctx, pidfd, done)
		return done
	}
	go watchPoll(ctx, rec, done)
	return done
}

func watchPidfd(ctx context.Context, pidfd int, done chan struct{}) {
	defer close(done)
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	first := true
	// The callback is called again each time the poller reports the fd
	// readable; the first call only registers interest.
	_ = rc.Read(func(fd uintptr) bool {
		if first {
			first = false
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, _ := unix.Poll(fds, 0)
			return n > 0
		}
		return true
	})
}
