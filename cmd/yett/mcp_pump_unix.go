//go:build unix

package main

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// pumpBufSize is what one read takes from either side: a whole MCP frame
// of the usual size, so one wake-up carries it.
const pumpBufSize = 64 << 10

// pump carries bytes both ways between the agent (in, out) and the
// gateway (sock) on one thread that waits in poll(2), every descriptor
// non-blocking: a frame costs one wake-up, one read and one write, where
// the runtime's poller and two goroutines cost two wake-ups and a
// scheduling pass each (BenchmarkShimRoundTrip). Each direction holds at
// most one buffer: it reads its source only once what it read before is
// written, so a side that stops reading stops the other from sending
// (nothing piles up in the shim) without stopping the opposite direction.
// What was read is written in full before an end is reported.
func pump(in, out, sock int) (pumpEnd, error) {
	up := pumpDir{src: in, dst: sock, toGateway: true, buf: make([]byte, pumpBufSize)}
	down := pumpDir{src: sock, dst: out, buf: make([]byte, pumpBufSize)}
	dirs := [2]*pumpDir{&up, &down}
	fds := make([]unix.PollFd, 0, 3)
	for {
		fds = fds[:0]
		var sockEvents int16
		for _, d := range dirs {
			fd, ev := d.waitsOn()
			if fd == sock {
				sockEvents |= ev
				continue
			}
			fds = append(fds, unix.PollFd{Fd: int32(fd), Events: ev})
		}
		if sockEvents != 0 {
			fds = append(fds, unix.PollFd{Fd: int32(sock), Events: sockEvents})
		}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return gatewayBroken, err
		}
		// Move what is ready: a read is followed by its write at once
		// (it usually goes through whole), so a frame costs one poll, one
		// read and one write.
		for _, d := range dirs {
			if fd, _ := d.waitsOn(); !ready(fds, fd) {
				continue
			}
			if done, end, err := d.step(); done {
				return end, err
			}
		}
	}
}

// ready reports whether poll found fd ready (or failed, which the next
// read or write reports).
func ready(fds []unix.PollFd, fd int) bool {
	for _, p := range fds {
		if int(p.Fd) == fd {
			return p.Revents != 0
		}
	}
	return false
}

// pumpDir is one direction of pump: bytes read from src, not yet all
// written to dst. toGateway is the agent's direction.
type pumpDir struct {
	src, dst  int
	toGateway bool
	buf       []byte
	n, off    int // buf[off:n] is still to write
}

func (d *pumpDir) pending() bool { return d.off < d.n }

// waitsOn is what blocks d: its destination when it holds bytes, else its
// source.
func (d *pumpDir) waitsOn() (fd int, events int16) {
	if d.pending() {
		return d.dst, unix.POLLOUT
	}
	return d.src, unix.POLLIN
}

// step reads from d's source when d holds nothing, then writes what d
// holds. done reports the pump's end: the source's end of file, or a
// failed read or write.
func (d *pumpDir) step() (done bool, end pumpEnd, err error) {
	if !d.pending() {
		n, err := unix.Read(d.src, d.buf)
		switch {
		case n > 0:
			d.n, d.off = n, 0
		case err == unix.EAGAIN || err == unix.EINTR:
			return false, 0, nil
		case d.toGateway:
			return true, agentGone, nil // stdin ended or failed
		case err != nil:
			return true, gatewayBroken, err
		default:
			return true, gatewayClosed, nil
		}
	}
	for d.pending() {
		n, err := unix.Write(d.dst, d.buf[d.off:d.n])
		if n > 0 {
			d.off += n
		}
		switch {
		case err == nil:
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			return false, 0, nil // the rest when poll says dst takes more
		case d.toGateway:
			return true, gatewayBroken, err
		default:
			return true, agentGone, nil // stdout closed: the agent is done with us
		}
	}
	return false, 0, nil
}

// sockFD is a descriptor of conn's socket for pump: a duplicate, closed
// by the returned func. ok is false when conn is not a Unix socket.
func sockFD(conn net.Conn) (fd int, closeFD func(), ok bool) {
	uc, isUnix := conn.(*net.UnixConn)
	if !isUnix {
		return -1, nil, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, nil, false
	}
	dupErr := errors.New("no descriptor")
	raw.Control(func(s uintptr) { fd, dupErr = unix.Dup(int(s)) })
	if dupErr != nil {
		return -1, nil, false
	}
	unix.CloseOnExec(fd)
	return fd, func() { unix.Close(fd) }, true
}
