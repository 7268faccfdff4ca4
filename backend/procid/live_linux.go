package procid

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// liveProc keeps one recorded process open, so that Matches re-reads only
// what can change and never has to find the process by its pid again:
//
//   - pidfd becomes readable when the process exits (zombies included). It
//     names the process, not the pid, so a reused pid cannot pass for it.
//   - dir is /proc/<pid> opened O_PATH: whatever is read through it belongs
//     to this process, or fails once it is gone, even if the pid is reused.
//   - cmdline is /proc/<pid>/cmdline kept open: each read shows the argv of
//     the program running now, so an exec is seen without reopening.
//
// The exe link is stat'ed through dir on every check (one syscall): it
// names the file the process runs now, which an exec changes.
type liveProc struct {
	mu       sync.RWMutex // Matches read-locks; close write-locks, so no fd is reused under a read
	pidfd    int          // -1 where the kernel has no pidfd_open (before 5.3)
	dir      int
	cmdline  int
	startKey uint64
	closed   bool
	cleanup  runtime.Cleanup
}

// openLive opens pid's handles and makes sure they are the process with
// startKey: they were opened on whatever process had the pid at that
// moment, and only its start stamp, read through them, says it is ours.
func openLive(pid int, startKey uint64) (*liveProc, error) {
	l := &liveProc{pidfd: -1, dir: -1, cmdline: -1, startKey: startKey}
	fail := func(err error) (*liveProc, error) {
		closeFDs([3]int{l.pidfd, l.dir, l.cmdline})
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
			return nil, fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
		}
		return nil, err
	}
	if !forceNoPidfdOpen {
		fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
		switch {
		case err == nil:
			l.pidfd = fd
		case errors.Is(err, unix.ESRCH):
			return fail(err)
		}
	}
	var err error
	if l.dir, err = unix.Open("/proc/"+strconv.Itoa(pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		return fail(err)
	}
	if l.cmdline, err = unix.Openat(l.dir, "cmdline", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return fail(err)
	}
	info, err := l.readStat(pid)
	if err != nil {
		return fail(err)
	}
	if info.startKey != startKey {
		closeFDs([3]int{l.pidfd, l.dir, l.cmdline})
		return nil, ErrPIDReused
	}
	// A safety net for a record nobody closed; Close is the prompt way.
	l.cleanup = runtime.AddCleanup(l, closeFDs, [3]int{l.pidfd, l.dir, l.cmdline})
	return l, nil
}

func closeFDs(fds [3]int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func (l *liveProc) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.cleanup.Stop()
	closeFDs([3]int{l.pidfd, l.dir, l.cmdline})
}

// readStat reads /proc/<pid>/stat through dir.
func (l *liveProc) readStat(pid int) (procInfo, error) {
	fd, err := unix.Openat(l.dir, "stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procInfo{}, goneOr(err, pid)
	}
	defer unix.Close(fd)
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return procInfo{}, goneOr(err, pid)
	}
	return parseStat(pid, buf[:n])
}

func goneOr(err error, pid int) error {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
	}
	return fmt.Errorf("procid: /proc/%d: %w", pid, err)
}

// cmdLine reads the whole command line as the kernel reports it: argv
// joined by NULs (or whatever the process wrote over it).
func (l *liveProc) cmdLine(pid int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Pread(l.cmdline, buf, int64(len(out)))
		if err != nil {
			return nil, goneOr(err, pid)
		}
		out = append(out, buf[:n]...)
		if n == 0 {
			return out, nil
		}
	}
}

// cmdLineSum hashes the command line without allocating in the common case
// of one that fits the stack buffer.
func (l *liveProc) cmdLineSum(pid int) ([32]byte, error) {
	var buf [4096]byte
	n, err := unix.Pread(l.cmdline, buf[:], 0)
	if err != nil {
		return [32]byte{}, goneOr(err, pid)
	}
	if n < len(buf) {
		return sha256.Sum256(buf[:n]), nil
	}
	raw, err := l.cmdLine(pid)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(raw), nil
}

// matches checks rec through its kept handles, or through handles opened
// for this one check when it has none (a record built by hand, or closed).
func (in *Inspector) matches(rec *RunRecord) error {
	l := rec.live
	if l != nil {
		l.mu.RLock()
		if !l.closed {
			err := in.check(l, rec)
			l.mu.RUnlock()
			return err
		}
		l.mu.RUnlock()
	}
	l, err := openLive(rec.PID, rec.StartKey)
	if err != nil {
		return err
	}
	defer l.close()
	return in.check(l, rec)
}

func (in *Inspector) check(l *liveProc, rec *RunRecord) error {
	if rec.StartKey != l.startKey {
		return ErrPIDReused
	}
	if l.pidfd >= 0 {
		fds := [1]unix.PollFd{{Fd: int32(l.pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds[:], 0)
		for err == unix.EINTR { // the runtime's preemption signal
			n, err = unix.Poll(fds[:], 0)
		}
		if err != nil {
			return fmt.Errorf("procid: poll pidfd of %d: %w", rec.PID, err)
		}
		if n > 0 { // readable: the process exited
			return fmt.Errorf("%w: pid %d", ErrProcessGone, rec.PID)
		}
	} else if _, err := l.readStat(rec.PID); err != nil {
		return err // gone, a zombie, or unreadable
	}
	var st unix.Stat_t
	if err := unix.Fstatat(l.dir, "exe", &st, 0); err != nil {
		if err := goneOr(err, rec.PID); errors.Is(err, ErrProcessGone) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrExeChanged, err)
	}
	id := fileIDOfStat(&st)
	if !id.sameFile(rec.ExeID) {
		return ErrExeChanged
	}
	if id != rec.ExeID && !in.sameContent(l, rec, id) {
		return ErrExeChangedOnDisk
	}
	sum, err := l.cmdLineSum(rec.PID)
	if err != nil {
		return err
	}
	if sum != rec.CmdLineSHA256 {
		return ErrCmdLineChanged
	}
	return nil
}

// sameContent hashes the running executable again: same file object, but
// its size or times moved since it was recorded.
func (in *Inspector) sameContent(l *liveProc, rec *RunRecord, id FileID) bool {
	fd, err := unix.Openat(l.dir, "exe", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "exe")
	defer f.Close()
	sum, err := in.hashes().sum(f, id)
	return err == nil && sum == rec.ExeSHA256
}

func fileIDOfStat(st *unix.Stat_t) FileID {
	return FileID{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: int64(st.Size),
		MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(),
	}
}

// dupPidfd returns a new pidfd for the recorded process, or -1.
func (l *liveProc) dupPidfd() int {
	if l == nil {
		return -1
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed || l.pidfd < 0 {
		return -1
	}
	fd, err := unix.FcntlInt(uintptr(l.pidfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

// cmdLineRaw reads pid's command line by pid, for display.
func cmdLineRaw(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
}
