package procid

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// forceNoPeerPIDFD makes CheckPeer behave as on kernels before 6.5, which
// lack SO_PEERPIDFD; tests use it to cover the fallback.
var forceNoPeerPIDFD = false

// Peer is the process on the other end of a local socket, as the kernel
// reported it when CheckPeer ran.
type Peer struct {
	PID int
	UID int
	// pidfd pins the peer process (Linux 6.5+); -1 when unavailable.
	pidfd    int
	startKey uint64
}

// CheckPeer asks the kernel who holds the other end of conn and refuses,
// with ErrForeignUser, a peer running as another user. Call it right after
// Accept, before reading anything. Close the Peer when done.
func CheckPeer(conn *net.UnixConn) (*Peer, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	pidfd := -1
	var credErr error
	err = raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if credErr != nil || forceNoPeerPIDFD {
			return
		}
		// SO_PEERPIDFD names the very process that connected, immune to
		// pid reuse. Older kernels answer ENOPROTOOPT: fall back to the
		// pid plus its start stamp.
		if pfd, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD); err == nil {
			unix.CloseOnExec(pfd)
			pidfd = pfd
		}
	})
	if err == nil {
		err = credErr
	}
	if err != nil {
		return nil, fmt.Errorf("procid: peer credentials: %w", err)
	}
	p := &Peer{PID: int(cred.Pid), UID: int(cred.Uid), pidfd: pidfd}
	if p.UID != os.Getuid() {
		p.Close()
		return nil, fmt.Errorf("%w (uid %d)", ErrForeignUser, p.UID)
	}
	info, err := readProc(p.PID)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.startKey = info.startKey
	return p, nil
}

// HasPIDFD reports whether the kernel gave a pidfd for the peer.
func (p *Peer) HasPIDFD() bool { return p.pidfd >= 0 }

// StillSame reports whether the peer process is still the one CheckPeer
// saw: with a pidfd, that it has not exited; without, that its pid still
// carries the same start stamp.
func (p *Peer) StillSame() bool {
	if p.pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(p.pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		for err == unix.EINTR { // the runtime's preemption signal, not an answer
			n, err = unix.Poll(fds, 0)
		}
		if err != nil || n > 0 { // readable pidfd: the process exited
			return false
		}
	}
	info, err := readProc(p.PID)
	return err == nil && info.startKey == p.startKey
}

// Close releases the pidfd, if any.
func (p *Peer) Close() error {
	if p.pidfd >= 0 {
		err := unix.Close(p.pidfd)
		p.pidfd = -1
		return err
	}
	return nil
}
