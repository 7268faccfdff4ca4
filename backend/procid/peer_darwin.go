package procid

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Peer is the process on the other end of a local socket, as the kernel
// reported it when CheckPeer ran.
type Peer struct {
	PID int
	UID int
	// PIDVersion comes from the audit token (LOCAL_PEERTOKEN); it changes
	// when a pid is reused, unlike the pid itself.
	PIDVersion uint32
	startKey   uint64
}

// CheckPeer asks the kernel who holds the other end of conn
// (LOCAL_PEERCRED for the uid, LOCAL_PEERPID and LOCAL_PEERTOKEN for the
// process) and refuses, with ErrForeignUser, a peer running as another
// user. Call it right after Accept, before reading anything.
func CheckPeer(conn *net.UnixConn) (*Peer, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	var (
		cred  *unix.Xucred
		pid   int
		token *unix.ICMPv6Filter
		serr  error
	)
	err = raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if serr != nil {
			return
		}
		pid, serr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		if serr != nil {
			return
		}
		// x/sys/unix has no raw getsockopt; ICMPv6Filter is a plain
		// [8]uint32, the exact layout of audit_token_t.
		token, serr = unix.GetsockoptICMPv6Filter(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERTOKEN)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return nil, fmt.Errorf("procid: peer credentials: %w", err)
	}
	p := &Peer{PID: pid, UID: int(cred.Uid)}
	// audit_token_t: val[1] is the effective uid, val[5] the pid, val[7]
	// the pid version.
	if int(token.Filt[5]) != pid {
		return nil, fmt.Errorf("%w: audit token pid %d, peer pid %d", ErrPeerChanged, token.Filt[5], pid)
	}
	p.PIDVersion = token.Filt[7]
	if p.UID != os.Getuid() || int(token.Filt[1]) != os.Getuid() {
		return nil, fmt.Errorf("%w (uid %d)", ErrForeignUser, p.UID)
	}
	info, err := readProc(pid)
	if err != nil {
		return nil, err
	}
	p.startKey = info.startKey
	return p, nil
}

// HasPIDFD reports whether the peer is pinned by a process descriptor;
// macOS has none.
func (p *Peer) HasPIDFD() bool { return false }

// StillSame reports whether the peer's pid still carries the start time it
// had when CheckPeer ran.
func (p *Peer) StillSame() bool {
	info, err := readProc(p.PID)
	return err == nil && info.startKey == p.startKey
}

// Close releases nothing on macOS; it exists for symmetry.
func (p *Peer) Close() error { return nil }
