package rpcframe

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Reader cuts a newline-delimited stream into frames and checks each one.
// It is not safe for concurrent use.
type Reader struct {
	br   *bufio.Reader
	lim  Limits
	buf  []byte
	size int // bytes of the last frame returned, terminator included
}

// NewReader reads frames from r. Its read buffer is small (a frame longer
// than it is gathered in buf, chunk by chunk): a gateway holds one Reader
// per agent connection, and with 64 KiB each 16 agents held a megabyte.
func NewReader(r io.Reader, lim Limits) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 4<<10), lim: lim.withDefaults()}
}

// keptBuffer is the most buf keeps between frames: one large frame does
// not leave its connection holding up to the frame limit for good.
const keptBuffer = 64 << 10

// Next returns the next frame as either a clean message or a Rejection;
// blank lines are skipped. The error is non-nil only when the stream itself
// failed or ended (io.EOF); a rejected frame is not an error, and Next can be
// called again after it.
func (r *Reader) Next() (jsonrpc.Message, *Rejection, error) {
	for {
		line, tooBig, id, err := r.readLine()
		r.size = len(line)
		if tooBig {
			return nil, tooLarge(id).rejection(), nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			msg, rej := Parse(line, r.lim)
			return msg, rej, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// readLine returns one line without its terminator. A line longer than the
// limit is consumed up to its newline without being kept: memory stays
// bounded by the limit whatever the peer sends. Its id, when a streaming
// scan of the discarded bytes finds a plain one, is returned so the answer
// can carry it. err is set only when no more lines can follow (a final
// unterminated line is still returned with it).
func (r *Reader) readLine() (line []byte, tooBig bool, id []byte, err error) {
	if cap(r.buf) > keptBuffer {
		r.buf = nil
	}
	r.buf = r.buf[:0]
	var scan *idScanner
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case scan != nil:
			scan.feed(chunk)
		case len(r.buf)+len(chunk) > r.lim.MaxFrameBytes+2: // room for "\r\n"
			tooBig, scan = true, &idScanner{}
			scan.feed(r.buf)
			scan.feed(chunk)
			r.buf = r.buf[:0]
		default:
			r.buf = appendBounded(r.buf, chunk, r.lim.MaxFrameBytes+2)
		}
		switch {
		case err == nil:
			return trimEOL(r.buf), tooBig, scanID(scan), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return trimEOL(r.buf), tooBig, scanID(scan), err
		}
	}
}

// LastFrameSize is the size of the frame Next returned last (what the
// reader held of it).
func (r *Reader) LastFrameSize() int { return r.size }

func scanID(s *idScanner) []byte {
	if s == nil {
		return nil
	}
	return s.id()
}

// appendBounded appends like append but never grows the buffer beyond
// bound, so a frame just under the limit does not cost twice the limit.
func appendBounded(buf, chunk []byte, bound int) []byte {
	need := len(buf) + len(chunk)
	if need > cap(buf) {
		grown := make([]byte, len(buf), min(max(2*cap(buf), need), bound))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, chunk...)
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
