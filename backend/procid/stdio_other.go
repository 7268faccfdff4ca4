//go:build !linux

package procid

// readShimStdio: this OS gives Yett no portable way to name who holds the
// other end of another process's pipe or socket without privileges (macOS
// would need libproc through cgo, Windows a system-wide handle scan), so
// the card says "not checked on this OS" and the origin is the process
// that started the shim, as before.
func readShimStdio(int) shimStdio { return shimStdio{status: stdioUnknown} }

func (shimStdio) relationOf(int) relation { return relNone }

func (shimStdio) soleHolder(int) (int, bool) { return 0, false }
