package procid

// stdioStatus says what the kernel let Yett learn about the shim's stdin
// and stdout.
type stdioStatus int

const (
	// stdioUnknown: this OS or kernel cannot say who holds them.
	stdioUnknown stdioStatus = iota
	// stdioNoEnds: they are not pipes or connected sockets (a terminal, a
	// file, /dev/null), so no process holds an other end.
	stdioNoEnds
	// stdioEnds: both are pipes or connected sockets; in and out say
	// what the other ends are.
	stdioEnds
	// stdioOtherNetns: they are sockets of another network namespace (a
	// container, `unshare -n`, a sandbox around the agent), whose other
	// ends the kernel names only to a process in that namespace.
	stdioOtherNetns
)

// stdioEnd is one of the shim's stdio descriptors, as the kernel names it.
type stdioEnd struct {
	ino    uint64
	socket bool
	// mode is how the shim holds a pipe (O_RDONLY, O_WRONLY or O_RDWR).
	mode int
	// peer is the inode of the socket on the other end of a socket.
	peer uint64
}

// shimStdio is the shim's stdin and stdout.
type shimStdio struct {
	status  stdioStatus
	in, out stdioEnd
}

// relation is what a process holds of the shim's stdio.
type relation int

const (
	relNone relation = iota
	// relSame: the same ends as the shim (a wrapper's own stdin and
	// stdout that it handed to the shim), not the other ends.
	relSame
	// relPeer: the other ends of both stdin and stdout: it writes what the
	// shim reads and reads what the shim writes.
	relPeer
)
