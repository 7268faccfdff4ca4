package procid

import (
	"encoding/binary"
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// Netlink sock_diag for Unix sockets (linux/sock_diag.h, linux/unix_diag.h).
const (
	sockDiagByFamily = 20     // SOCK_DIAG_BY_FAMILY
	udiagShowPeer    = 1 << 2 // UDIAG_SHOW_PEER
	unixDiagPeer     = 2      // UNIX_DIAG_PEER
	nlmsgHdrLen      = 16
	unixDiagReqLen   = 24
	unixDiagMsgLen   = 16
)

var errNoPeer = errors.New("procid: socket has no peer")

// socketPeer asks the kernel for the inode of the socket connected to the
// Unix socket with inode ino. Node's libuv gives a child's stdio as socket
// pairs, so this is how the agent behind most MCP clients is recognised.
func socketPeer(ino uint64) (uint64, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ne := binary.NativeEndian
	req := make([]byte, nlmsgHdrLen+unixDiagReqLen)
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // sequence
	req[16] = unix.AF_UNIX
	ne.PutUint32(req[20:], ^uint32(0)) // every state
	ne.PutUint32(req[24:], uint32(ino))
	ne.PutUint32(req[28:], udiagShowPeer)
	ne.PutUint32(req[32:], ^uint32(0)) // no cookie
	ne.PutUint32(req[36:], ^uint32(0))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, err
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, err
	}
	return parseDiagReply(buf[:n], ino)
}

// parseDiagReply finds UNIX_DIAG_PEER in the kernel's answer about ino.
func parseDiagReply(b []byte, ino uint64) (uint64, error) {
	ne := binary.NativeEndian
	if len(b) < nlmsgHdrLen {
		return 0, errors.New("procid: short sock_diag reply")
	}
	msgLen := int(ne.Uint32(b[0:]))
	typ := ne.Uint16(b[4:])
	if msgLen > len(b) || msgLen < nlmsgHdrLen {
		return 0, errors.New("procid: malformed sock_diag reply")
	}
	if typ == unix.NLMSG_ERROR {
		if msgLen >= nlmsgHdrLen+4 {
			if code := int32(ne.Uint32(b[nlmsgHdrLen:])); code != 0 {
				return 0, unix.Errno(-code)
			}
		}
		return 0, errors.New("procid: sock_diag error")
	}
	if typ != sockDiagByFamily || msgLen < nlmsgHdrLen+unixDiagMsgLen {
		return 0, errors.New("procid: unexpected sock_diag reply")
	}
	msg := b[nlmsgHdrLen:msgLen]
	if uint64(ne.Uint32(msg[4:])) != ino {
		return 0, errors.New("procid: sock_diag answered about another socket")
	}
	for attrs := msg[unixDiagMsgLen:]; len(attrs) >= 4; {
		l, t := int(ne.Uint16(attrs[0:])), ne.Uint16(attrs[2:])
		if l < 4 || l > len(attrs) {
			break
		}
		if t == unixDiagPeer && l >= 8 {
			return uint64(ne.Uint32(attrs[4:])), nil
		}
		attrs = attrs[min((l+3)&^3, len(attrs)):]
	}
	return 0, errNoPeer
}

// sockDiagWorks asks once whether this kernel answers sock_diag for Unix
// sockets (CONFIG_UNIX_DIAG), on a socket pair of our own.
var sockDiagWorks = sync.OnceValue(func() bool {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	var a, b unix.Stat_t
	if unix.Fstat(fds[0], &a) != nil || unix.Fstat(fds[1], &b) != nil {
		return false
	}
	peer, err := socketPeer(a.Ino)
	return err == nil && peer == b.Ino
})
