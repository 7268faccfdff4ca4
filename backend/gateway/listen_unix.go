//go:build unix

package gateway

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/yettdev/yett/backend/procid"
)

// address is where the gateway of runtime directory dir listens: the socket
// inside it.
func address(dir string) string { return filepath.Join(dir, SocketName) }

// listen opens the gateway's socket: 0600 inside the 0700 runtime
// directory, removed when the listener closes. The caller holds the
// runtime directory's lock, so a socket file left there is stale.
func listen(dir string) (net.Listener, error) {
	sock := address(dir)
	os.Remove(sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("gateway: listen: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("gateway: socket mode: %w", err)
	}
	return ln, nil
}

// identify is procid.Identify on the accepted socket: the kernel's peer
// credentials, a foreign user refused before a byte is read.
func identify(in *procid.Inspector, nc net.Conn) (*procid.RunRecord, error) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return nil, fmt.Errorf("%w: not a Unix socket", procid.ErrForeignUser)
	}
	return in.Identify(uc)
}

// Dial connects to the gateway of runtime directory dir, as `yett mcp`
// does. Any error means there is no gateway to talk to.
func Dial(ctx context.Context, dir string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", address(dir))
}
