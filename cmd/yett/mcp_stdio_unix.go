//go:build unix

package main

import (
	"io"
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
	fd := int(f.Fd())
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO && st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, nil, false
	}
	nfd, err := unix.Dup(fd)
	if err != nil {
		return nil, nil, false
	}
	unix.CloseOnExec(nfd)
	if unix.SetNonblock(nfd, true) != nil {
		unix.Close(nfd)
		return nil, nil, false
	}
	// NewFile of a non-blocking descriptor registers it with the poller.
	return os.NewFile(uintptr(nfd), f.Name()), func() { unix.SetNonblock(nfd, false) }, true
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
