package journal

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// dataSync makes f's appended bytes durable with fdatasync(2) (the data
// and the size that reaches it; the log never needs its times). Where the
// process has more than one processor it is a raw system call, which keeps
// its processor for the fraction of a millisecond the disk takes: a plain
// one is taken back by the runtime's monitor after 20 µs and handed to
// another thread, and while that keeps happening the monitor wakes every
// 20 µs, which was a tenth of `yett serve`'s CPU under 16 agents. With a
// single processor the process would stand still for the whole sync, so
// there it stays a plain call.
func dataSync(f *os.File) error {
	if runtime.GOMAXPROCS(0) < 2 {
		return f.Sync()
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			_, _, e := unix.RawSyscall(unix.SYS_FDATASYNC, fd, 0, 0)
			if e != unix.EINTR {
				if e != 0 {
					serr = &os.PathError{Op: "fdatasync", Path: f.Name(), Err: e}
				}
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}
