package rpcframe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is an mcp.Transport over one accepted connection that routes
// every incoming frame through the policy point. Use it once, with
// (*mcp.Server).Connect.
type Transport struct {
	// Conn is the connection to the agent (its shim).
	Conn io.ReadWriteCloser
	// Limits bounds each incoming frame.
	Limits Limits
	// OnReject, when set, is told about every rejected frame after its reply
	// (if any) was written. It runs on the read goroutine: keep it short.
	OnReject func(*Rejection)
	// Divert, when set, is offered every clean request and notification
	// before the SDK sees it, on the read goroutine (keep it short). It
	// returns true when it took the message: the SDK never sees it, and
	// a call it took must be answered with Respond or RespondError on c,
	// which also gives back the work the call held (Limits).
	Divert func(c *Connection, req *jsonrpc.Request) bool
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &Connection{
		rwc:      t.Conn,
		onReject: t.OnReject,
		divert:   t.Divert,
		lim:      t.Limits.withDefaults(),
		held:     map[any]int{},
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
	}
	go c.readLoop(NewReader(t.Conn, t.Limits))
	return c, nil
}

// Connection is the mcp.Connection Transport returns. Read yields only
// clean single messages; rejected frames are answered here and never
// surface, so the SDK session survives them.
type Connection struct {
	rwc      io.ReadWriteCloser
	onReject func(*Rejection)
	divert   func(*Connection, *jsonrpc.Request) bool
	lim      Limits

	writeMu sync.Mutex

	// The calls handed to the SDK and not answered yet, by id, with their
	// frame sizes: the work this connection holds (Limits.MaxInFlight,
	// MaxHeldBytes).
	heldMu    sync.Mutex
	held      map[any]int
	heldBytes int

	incoming  chan readResult
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// readLoop runs in its own goroutine so that Read can honour ctx and Close
// even while the peer sends nothing.
func (c *Connection) readLoop(r *Reader) {
	for {
		msg, rej, err := r.Next()
		if rej == nil && err == nil {
			rej = c.admit(msg, r.LastFrameSize())
		}
		if rej != nil {
			if rej.Reply != nil {
				if werr := c.writeRaw(rej.Reply); werr != nil {
					err = werr
				}
			}
			if c.onReject != nil {
				c.onReject(rej)
			}
			if err == nil {
				continue
			}
		}
		if err != nil {
			msg = nil
		} else if req, ok := msg.(*jsonrpc.Request); ok && c.divert != nil && c.divert(c, req) {
			continue
		}
		select {
		case c.incoming <- readResult{msg: msg, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// admit takes a call into the connection's held work, or rejects it BUSY
// when the connection holds its limit already. Nothing of a rejected call
// is kept or run.
func (c *Connection) admit(msg jsonrpc.Message, size int) *Rejection {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return nil // notifications and responses hold no work here
	}
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	key := req.ID.Raw()
	if _, dup := c.held[key]; !dup && len(c.held) < c.lim.MaxInFlight && c.heldBytes+size <= c.lim.MaxHeldBytes {
		c.held[key] = size
		c.heldBytes += size
		return nil
	}
	// A duplicate id cannot be answered apart from the call it repeats;
	// refusing it keeps the count honest.
	id, _ := json.Marshal(key) // a string or an integer: parse.go built it
	return &Rejection{Reason: fmt.Errorf("%w", ErrBusy), Reply: ErrorReply(id, CodeBusy, fmt.Sprintf(
		"BUSY: this connection already has %d calls (%d bytes) waiting for an answer, at most %d calls and %d bytes; "+
			"this call was not started. Wait for answers before sending more", len(c.held), c.heldBytes, c.lim.MaxInFlight, c.lim.MaxHeldBytes))}
}

// release drops an answered call from the held work.
func (c *Connection) release(msg jsonrpc.Message) {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.releaseID(resp.ID)
	}
}

func (c *Connection) releaseID(id jsonrpc.ID) {
	if !id.IsValid() {
		return
	}
	c.heldMu.Lock()
	if size, ok := c.held[id.Raw()]; ok {
		delete(c.held, id.Raw())
		c.heldBytes -= size
	}
	c.heldMu.Unlock()
}

// Respond answers the call id that Divert took with result, a JSON value
// the caller encoded, and gives back the work the call held.
func (c *Connection) Respond(id jsonrpc.ID, result []byte) error {
	rawID, err := json.Marshal(id.Raw())
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(rawID)+len(result)+1)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, rawID...)
	line = append(line, `,"result":`...)
	line = append(line, result...)
	line = append(line, "}\n"...)
	err = c.writeRaw(line)
	c.releaseID(id)
	return err
}

// RespondError answers the call id that Divert took with a JSON-RPC error
// (a *jsonrpc.Error keeps its code; any other error is an internal error),
// as the SDK would, and gives back the work the call held.
func (c *Connection) RespondError(id jsonrpc.ID, rpcErr error) error {
	return c.Write(context.Background(), &jsonrpc.Response{ID: id, Error: rpcErr})
}

// Held reports the calls and bytes the connection holds now.
func (c *Connection) Held() (calls, bytes int) {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	return len(c.held), c.heldBytes
}

// Read implements mcp.Connection.
func (c *Connection) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case res := <-c.incoming:
		return res.msg, res.err
	}
}

// Write implements mcp.Connection.
func (c *Connection) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeRaw(append(data, '\n'))
	c.release(msg)
	return err
}

func (c *Connection) writeRaw(line []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.rwc.Write(line)
	return err
}

// Close implements mcp.Connection. Closing the underlying connection is what
// unblocks a read in progress.
func (c *Connection) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.rwc.Close()
	})
	return c.closeErr
}

// SessionID implements mcp.Connection; a local socket has no session id.
func (c *Connection) SessionID() string { return "" }
