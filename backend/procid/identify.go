package procid

import (
	"fmt"
	"net"
)

// Identify is what the gateway does on Accept of a Unix socket: check the
// peer, find and record the origin, and make sure the peer did not change
// meanwhile. The origin is the process that holds the shim's stdio: the
// one that started the shim when it does (Origin), else the one process of
// this user that does, else the shim itself (Stdio says which). Errors
// wrap ErrForeignUser, ErrNoOrigin, ErrProcessGone or ErrPeerChanged; on
// any error refuse the connection. Close the record when the connection
// ends.
func (in *Inspector) Identify(conn *net.UnixConn) (*RunRecord, error) {
	peer, err := CheckPeer(conn)
	if err != nil {
		return nil, err
	}
	defer peer.Close()
	return in.IdentifyPeer(peer)
}

// IdentifyPeer records the origin above an already checked peer (on
// Windows, from CheckPipeClient), as Identify does. The caller still owns
// and closes peer.
func (in *Inspector) IdentifyPeer(peer *Peer) (*RunRecord, error) {
	rec, err := in.Origin(peer.PID)
	if err != nil {
		return nil, err
	}
	if rec.Stdio == StdioNotHeld || rec.Stdio == StdioOtherNetns {
		acting, err := in.actingOrigin(rec)
		rec.Close()
		if err != nil {
			return nil, err
		}
		rec = acting
	}
	if !peer.StillSame() {
		rec.Close()
		return nil, fmt.Errorf("%w: shim %d", ErrPeerChanged, peer.PID)
	}
	return rec, nil
}
