//go:build unix

package main

import (
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns, for a pipe or socket, a copy of f's descriptor set
// non-blocking, so that reading and writing it wait in the runtime's poller
// instead of in a system call that holds the shim's one processor: with a
// plain read of stdin holding it, an answer that came back from the gateway
// within the first tens of microseconds waited until the scheduler's
// monitor took the processor back (BenchmarkShimRoundTrip). Anything else
// (a terminal, a file, /dev/null) is left as it is (ok false): its
// blocking mode is shared with whoever else has it open. restore puts the
// blocking mode back, for whoever reads the pipe after the shim.
func pollable(f *os.File) (dup *os.File, restore func(), ok bool) {
	nfd, restore, ok := nonblockingDup(f)
	if !ok {
		return nil, nil, false
	}
	// NewFile of a non-blocking descriptor registers it with the poller.
	return os.NewFile(uintptr(nfd), f.Name()), restore, true
}

// nonblockingDup is pollable's descriptor, for pump: a duplicate of f's
// set non-blocking, when f is a pipe or a socket. restore puts the
// blocking mode back; closing the duplicate is the caller's.
func nonblockingDup(f *os.File) (fd int, restore func(), ok bool) {
	ofd := int(f.Fd())
	var st unix.Stat_t
	if unix.Fstat(ofd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO && st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return -1, nil, false
	}
	nfd, err := unix.Dup(ofd)
	if err != nil {
		return -1, nil, false
	}
	unix.CloseOnExec(nfd)
	if unix.SetNonblock(nfd, true) != nil {
		unix.Close(nfd)
		return -1, nil, false
	}
	return nfd, func() { unix.SetNonblock(nfd, false) }, true
}

// pumpStdio is pump over env's stdin and stdout and conn, when all three
// are descriptors poll(2) can wait on (pipes and sockets, as an agent's
// client gives); ok is false otherwise and pipe copies with goroutines.
// restore puts stdin and stdout back as they were and closes the copies.
func pumpStdio(env *Env, conn net.Conn) (run func() (pumpEnd, error), restore func(), ok bool) {
	inF, okIn := env.Stdin.(*os.File)
	outF, okOut := env.Stdout.(*os.File)
	if !okIn || !okOut {
		return nil, nil, false
	}
	var undo []func()
	restore = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	fds := make([]int, 0, 3)
	for _, f := range []*os.File{inF, outF} {
		fd, r, ok := nonblockingDup(f)
		if !ok {
			restore()
			return nil, nil, false
		}
		undo = append(undo, func() { r(); unix.Close(fd) })
		fds = append(fds, fd)
	}
	sock, closeSock, ok := sockFD(conn)
	if !ok {
		restore()
		return nil, nil, false
	}
	undo = append(undo, closeSock)
	return func() (pumpEnd, error) { return pump(fds[0], fds[1], sock) }, restore, true
}

// pollableStdio is env's stdin and stdout, each made pollable where it can
// be.
func pollableStdio(env *Env) (in io.Reader, out io.Writer, restore func()) {
	in, out = env.Stdin, env.Stdout
	var undo []func()
	if f, ok := in.(*os.File); ok {
		if dup, r, ok := pollable(f); ok {
			in, undo = dup, append(undo, r)
		}
	}
	if f, ok := out.(*os.File); ok {
		if dup, r, ok := pollable(f); ok {
			out, undo = dup, append(undo, r)
		}
	}
	return in, out, func() {
		for _, r := range undo {
			r()
		}
	}
}
