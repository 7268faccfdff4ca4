//go:build windows

package gateway

// The pipe is made with github.com/Microsoft/go-winio rather than raw
// syscalls: it is the named-pipe net.Listener Docker, containerd and the
// Go SDKs of Azure rely on, it creates the first instance with FILE_CREATE
// (the FILE_FLAG_FIRST_PIPE_INSTANCE guarantee: the call fails if the name
// exists), always sets FILE_PIPE_REJECT_REMOTE_CLIENTS, applies our SDDL to
// that first instance, and does overlapped I/O so Close ends a blocked
// Accept or Read. Hand-written, each of those is a place to get wrong.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"

	"github.com/yettdev/yett/backend/procid"
)

// currentSID is the SID of the user this process runs as.
func currentSID() (string, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("gateway: who am I: %w", err)
	}
	return u.User.Sid.String(), nil
}

// pipeFor is the pipe of runtime directory dir for the current user.
func pipeFor(dir string) (string, error) {
	sid, err := currentSID()
	if err != nil {
		return "", err
	}
	return pipeName(sid, filepath.Clean(dir))
}

// address is where the gateway of runtime directory dir listens: its named
// pipe, or the runtime directory itself if the user's SID cannot be read
// (then nothing listens, and New has already failed).
func address(dir string) string {
	name, err := pipeFor(dir)
	if err != nil {
		return dir
	}
	return name
}

// pipeBuffer sizes each direction of a pipe instance: a whole ordinary
// MCP frame fits, so a writer does not wait for the reader on every write
// (with go-winio's default of 0, Wine blocks every write until the other
// side reads; Windows treats the size as a quota).
const pipeBuffer = 64 << 10

// listen creates the gateway's named pipe as its first instance, with a
// DACL that lets only this user open it (pipeSDDL) and remote clients
// refused by the pipe itself.
func listen(dir string) (net.Listener, error) {
	sid, err := currentSID()
	if err != nil {
		return nil, err
	}
	name, err := pipeName(sid, filepath.Clean(dir))
	if err != nil {
		return nil, fmt.Errorf("gateway: listen: %w", err)
	}
	sddl, err := pipeSDDL(sid)
	if err != nil {
		return nil, fmt.Errorf("gateway: listen: %w", err)
	}
	ln, err := winio.ListenPipe(name, &winio.PipeConfig{SecurityDescriptor: sddl,
		InputBufferSize: pipeBuffer, OutputBufferSize: pipeBuffer})
	if err != nil {
		// We hold the runtime directory's lock and pipes vanish with their
		// last handle, so an existing name is someone else's pipe, made
		// before us to receive our agents. Fail loudly, never serve.
		if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS) ||
			errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_PIPE_BUSY) {
			return nil, fmt.Errorf("%w: %s: %w", ErrAddressTaken, name, err)
		}
		return nil, fmt.Errorf("gateway: listen: %w", err)
	}
	if underWine() {
		usePlaceholderInstance(name)
	}
	return ln, nil
}

// underWine reports whether this process runs under Wine, whose ntdll
// exports wine_get_version (Windows' never does).
func underWine() bool {
	ntdll := windows.NewLazySystemDLL("ntdll.dll")
	return ntdll.NewProc("wine_get_version").Find() == nil
}

// usePlaceholderInstance connects once, with no access right, to the
// first pipe instance go-winio makes. That instance is a placeholder
// Windows 10 and later never hand to a client; Wine does hand it to the
// first one, whose I/O then hangs forever. Used up here, every agent gets a
// real instance. Only under Wine: on Windows this open would take an
// instance an agent is waiting for.
func usePlaceholderInstance(name string) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return
	}
	h, err := windows.CreateFile(p, 0, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err == nil {
		windows.CloseHandle(h)
	}
}

// pipeHandle is the one method of go-winio's pipe connection we need: its
// handle, for GetNamedPipeClientProcessId and GetNamedPipeServerProcessId.
type pipeHandle interface{ Fd() uintptr }

// identify is the Windows side of procid.Identify: the kernel names the
// pipe's client process (procid.CheckPipeClient), a process of another
// user is refused before a byte is read, and the origin above it is
// recorded as on Unix.
func identify(in *procid.Inspector, nc net.Conn) (*procid.RunRecord, error) {
	ph, ok := nc.(pipeHandle)
	if !ok {
		return nil, fmt.Errorf("%w: not a named pipe", procid.ErrForeignUser)
	}
	peer, err := procid.CheckPipeClient(windows.Handle(ph.Fd()))
	if err != nil {
		return nil, err
	}
	defer peer.Close()
	return in.IdentifyPeer(peer)
}

// ErrNotOurGateway is returned by Dial on Windows when the process serving
// the pipe runs as another user: a squatter, not a Yett gateway of ours.
var ErrNotOurGateway = errors.New("gateway: the named pipe is served by another user's process")

// dialBusyWait bounds how long Dial waits while every pipe instance is busy
// (between two Accepts of the gateway); a missing pipe fails at once.
const dialBusyWait = 5 * time.Second

// Dial connects to the gateway of runtime directory dir, as `yett mcp`
// does, and makes sure the process serving the pipe runs as this user
// before a byte is sent: our own gateway's DACL already keeps others out,
// but a pipe of the same name made by someone else would not. Any error
// means there is no gateway to talk to.
func Dial(ctx context.Context, dir string) (net.Conn, error) {
	name, err := pipeFor(dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dialBusyWait)
	defer cancel()
	c, err := winio.DialPipeContext(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := checkServer(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkServer compares the token user of the pipe's server process with
// ours.
func checkServer(c net.Conn) error {
	ph, ok := c.(pipeHandle)
	if !ok {
		return fmt.Errorf("%w: not a named pipe", ErrNotOurGateway)
	}
	var pid uint32
	if err := windows.GetNamedPipeServerProcessId(windows.Handle(ph.Fd()), &pid); err != nil {
		return fmt.Errorf("%w: server pid: %w", ErrNotOurGateway, err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return fmt.Errorf("%w: server %d: %w", ErrNotOurGateway, pid, err)
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return fmt.Errorf("%w: server %d token: %w", ErrNotOurGateway, pid, err)
	}
	defer tok.Close()
	them, err := tok.GetTokenUser()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotOurGateway, err)
	}
	me, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotOurGateway, err)
	}
	if !them.User.Sid.Equals(me.User.Sid) {
		return fmt.Errorf("%w (%s)", ErrNotOurGateway, them.User.Sid.String())
	}
	return nil
}
