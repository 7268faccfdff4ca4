package procid

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/windows"
)

// Peer is the process on the other end of the gateway's named pipe, as the
// kernel reported it.
type Peer struct {
	PID int
	// UID is -1 on Windows; the owner check compares SIDs.
	UID int
	// handle pins the peer process: its pid cannot be reused while open.
	handle   windows.Handle
	startKey uint64
}

// CheckPeer exists for the Unix-socket API; Windows has no peer
// credentials on AF_UNIX sockets, so the gateway uses a named pipe and
// CheckPipeClient instead.
func CheckPeer(*net.UnixConn) (*Peer, error) {
	return nil, fmt.Errorf("procid: %w on Windows: use CheckPipeClient", errors.ErrUnsupported)
}

// CheckPipeClient asks the kernel which process is the client of pipe
// (GetNamedPipeClientProcessId) and refuses, with ErrForeignUser, one whose
// token belongs to another user. Call it right after ConnectNamedPipe,
// before reading anything. Close the Peer when done.
func CheckPipeClient(pipe windows.Handle) (*Peer, error) {
	var pid uint32
	if err := windows.GetNamedPipeClientProcessId(pipe, &pid); err != nil {
		return nil, fmt.Errorf("procid: pipe client: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, pid)
	if err != nil {
		return nil, fmt.Errorf("%w: pipe client %d: %w", ErrProcessGone, pid, err)
	}
	p := &Peer{PID: int(pid), UID: -1, handle: h}
	if err := sameUser(h); err != nil {
		p.Close()
		return nil, err
	}
	info, err := procTimes(h, p.PID)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.startKey = info.startKey
	return p, nil
}

func sameUser(h windows.Handle) error {
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return fmt.Errorf("%w: cannot read the client's token: %w", ErrForeignUser, err)
	}
	defer tok.Close()
	them, err := tok.GetTokenUser()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrForeignUser, err)
	}
	me, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	if !them.User.Sid.Equals(me.User.Sid) {
		return fmt.Errorf("%w (%s)", ErrForeignUser, them.User.Sid.String())
	}
	return nil
}

// HasPIDFD reports whether the peer is pinned; on Windows the process
// handle always pins it.
func (p *Peer) HasPIDFD() bool { return p.handle != 0 }

// StillSame reports whether the peer process has not exited.
func (p *Peer) StillSame() bool {
	ev, err := windows.WaitForSingleObject(p.handle, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// Close releases the process handle.
func (p *Peer) Close() error {
	if p.handle != 0 {
		err := windows.CloseHandle(p.handle)
		p.handle = 0
		return err
	}
	return nil
}
