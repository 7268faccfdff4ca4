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
// (a terminal, a file, /dev/null) is returned as it is: its blocking mode
// is shared with whoever else has it open. restore puts the blocking mode
// back, for whoever reads the pipe after the shim.
func pollable(f any) (rw any, restore func()) {
	file, ok := f.(*os.File)
	if !ok {
		return f, func() {}
	}
	var st unix.Stat_t
	if unix.Fstat(int(file.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO && st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return f, func() {}
	}
	fd, err := unix.Dup(int(file.Fd()))
	if err != nil {
		return f, func() {}
	}
	unix.CloseOnExec(fd)
	if unix.SetNonblock(fd, true) != nil {
		unix.Close(fd)
		return f, func() {}
	}
	// NewFile of a non-blocking descriptor registers it with the poller.
	dup := os.NewFile(uintptr(fd), file.Name())
	return dup, func() { unix.SetNonblock(fd, false) }
}

// pollableStdio is env's stdin and stdout, each made pollable where it can
// be.
func pollableStdio(env *Env) (in io.Reader, out io.Writer, restore func()) {
	r, restoreIn := pollable(env.Stdin)
	w, restoreOut := pollable(env.Stdout)
	return r.(io.Reader), w.(io.Writer), func() { restoreIn(); restoreOut() }
}
