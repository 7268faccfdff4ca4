package rpcframe

import (
	"context"
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
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &Connection{
		rwc:      t.Conn,
		onReject: t.OnReject,
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

	writeMu sync.Mutex

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
	return c.writeRaw(append(data, '\n'))
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
