package audit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Record kinds. The kind byte is the first byte of a record body and so part
// of the Merkle leaf: an event cannot be passed off as a checkpoint.
const (
	KindEvent      byte = 'E' // payload is an age ciphertext of one Event
	KindCheckpoint byte = 'C' // payload is a signed checkpoint note (public)
)

const (
	logIDSize = 16
	// bodyPrefix is kind, log ID and index, which precede the payload.
	bodyPrefix = 1 + logIDSize + 8
	// frameHeader is the body length and the CRC-32C of those four bytes.
	// The length gets its own checksum so a flipped length bit reads as
	// corruption, never as a record that seems to run past the end of file
	// (which is what a torn write looks like).
	frameHeader  = 8
	frameTrailer = 4 // CRC-32C of the body
	// MaxBodySize bounds one record. Events are small; a bound keeps a
	// corrupt length from making a reader allocate gigabytes.
	MaxBodySize = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// LogID identifies one installation's log. Every record carries it, so
// records spliced in from another installation are caught at their index.
type LogID [logIDSize]byte

// Record is one decoded log record. Body is the Merkle leaf data.
type Record struct {
	Kind    byte
	LogID   LogID
	Index   int64
	Payload []byte
	Body    []byte // kind || log ID || index || payload, as hashed
}

// Framing errors. ErrTorn means the bytes may be an interrupted append; the
// others mean the bytes cannot have been written by a correct writer.
var (
	ErrTorn        = errors.New("audit: incomplete record at end of log")
	ErrBadFrame    = errors.New("audit: corrupt record framing")
	ErrBadChecksum = errors.New("audit: record checksum mismatch")
	ErrBadBody     = errors.New("audit: malformed record body")

	errZeroTrailer = fmt.Errorf("%w (zero trailer)", ErrBadChecksum)
)

// encodeBody builds the leaf data of a record.
func encodeBody(kind byte, id LogID, index int64, payload []byte) []byte {
	b := make([]byte, bodyPrefix+len(payload))
	b[0] = kind
	copy(b[1:], id[:])
	binary.BigEndian.PutUint64(b[1+logIDSize:], uint64(index))
	copy(b[bodyPrefix:], payload)
	return b
}

// frame wraps a body in its length, header checksum and body checksum.
func frame(body []byte) []byte {
	out := make([]byte, frameHeader+len(body)+frameTrailer)
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	binary.BigEndian.PutUint32(out[4:], crc32.Checksum(out[:4], castagnoli))
	copy(out[frameHeader:], body)
	binary.BigEndian.PutUint32(out[frameHeader+len(body):], crc32.Checksum(body, castagnoli))
	return out
}

// parseBody splits a record body into its fields.
func parseBody(body []byte) (Record, error) {
	if len(body) < bodyPrefix {
		return Record{}, fmt.Errorf("%w: %d bytes", ErrBadBody, len(body))
	}
	r := Record{Kind: body[0], Body: body, Payload: body[bodyPrefix:]}
	if r.Kind != KindEvent && r.Kind != KindCheckpoint {
		return Record{}, fmt.Errorf("%w: unknown kind 0x%02x", ErrBadBody, r.Kind)
	}
	copy(r.LogID[:], body[1:])
	idx := binary.BigEndian.Uint64(body[1+logIDSize:])
	if idx > 1<<62 {
		return Record{}, fmt.Errorf("%w: index out of range", ErrBadBody)
	}
	r.Index = int64(idx)
	return r, nil
}

// recordReader reads framed records one by one from a stream.
type recordReader struct {
	r   io.Reader
	off int64 // offset of the next record
	hdr [frameHeader]byte
	buf []byte
}

// next returns the next record and its frame size. At a clean end it returns
// io.EOF. ErrTorn is returned only when the remaining bytes are a prefix of a
// record whose header is intact, a partial header, or zeros, which is what an
// interrupted append leaves; anything else is ErrBadFrame or ErrBadChecksum.
func (rr *recordReader) next() (Record, int, error) {
	n, err := io.ReadFull(rr.r, rr.hdr[:])
	if err == io.EOF {
		return Record{}, 0, io.EOF
	}
	if err == io.ErrUnexpectedEOF {
		return Record{}, n, ErrTorn
	}
	if err != nil {
		return Record{}, 0, err
	}
	length := binary.BigEndian.Uint32(rr.hdr[:4])
	if binary.BigEndian.Uint32(rr.hdr[4:]) != crc32.Checksum(rr.hdr[:4], castagnoli) {
		if allZero(rr.hdr[:]) && rr.restZero() {
			return Record{}, frameHeader, ErrTorn
		}
		return Record{}, frameHeader, ErrBadFrame
	}
	if length > MaxBodySize || length < bodyPrefix {
		return Record{}, frameHeader, fmt.Errorf("%w: length %d", ErrBadFrame, length)
	}
	need := int(length) + frameTrailer
	if cap(rr.buf) < need {
		rr.buf = make([]byte, need)
	}
	buf := rr.buf[:need]
	m, err := io.ReadFull(rr.r, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return Record{}, frameHeader + m, ErrTorn
	}
	if err != nil {
		return Record{}, 0, err
	}
	body := buf[:length]
	if binary.BigEndian.Uint32(buf[length:]) != crc32.Checksum(body, castagnoli) {
		// A zero trailer on the last record is what a file system that
		// extended the file but did not persist the data leaves after a
		// crash; the caller decides, since only it knows this is the end.
		if allZero(buf[length:]) {
			return Record{}, frameHeader + need, errZeroTrailer
		}
		return Record{}, frameHeader + need, ErrBadChecksum
	}
	rec, err := parseBody(body)
	if err != nil {
		return Record{}, frameHeader + need, err
	}
	return rec, frameHeader + need, nil
}

// restZero reports whether everything left in the stream is zero bytes.
func (rr *recordReader) restZero() bool {
	var b [4096]byte
	for {
		n, err := rr.r.Read(b[:])
		if !allZero(b[:n]) {
			return false
		}
		if err != nil {
			return err == io.EOF
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
