package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"golang.org/x/mod/sumdb/tlog"
)

// Record kinds. The kind byte is the first byte of a record body and so part
// of the Merkle leaf: an event cannot be passed off as a checkpoint.
const (
	KindEvent      byte = 'E' // payload is one Event sealed under its segment's key (format 1: an age file)
	KindCheckpoint byte = 'C' // payload is a signed checkpoint note (public)
	KindSegmentKey byte = 'K' // payload is a segment key sealed to the audit recipient (age)
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
	rec := make([]byte, frameHeader+len(body)+frameTrailer)
	copy(rec[frameHeader:], body)
	binary.BigEndian.PutUint32(rec, uint32(len(body)))
	finishRecord(rec)
	return rec
}

// newRecord allocates a whole framed record with room for a payload of n
// bytes and fills in its length and body prefix, so that a payload can be
// written in place and the record sent with one write, without copies.
func newRecord(kind byte, id LogID, index int64, n int) []byte {
	rec := make([]byte, frameHeader+bodyPrefix+n+frameTrailer)
	binary.BigEndian.PutUint32(rec, uint32(bodyPrefix+n))
	b := rec[frameHeader:]
	b[0] = kind
	copy(b[1:], id[:])
	binary.BigEndian.PutUint64(b[1+logIDSize:], uint64(index))
	return rec
}

// finishRecord computes the leaf hash and both checksums of a framed record
// whose length and body are in place.
func finishRecord(rec []byte) tlog.Hash {
	leaf := leafHash(rec)
	binary.BigEndian.PutUint32(rec[4:], crc32.Checksum(rec[:4], castagnoli))
	body := rec[frameHeader : len(rec)-frameTrailer]
	binary.BigEndian.PutUint32(rec[len(rec)-frameTrailer:], crc32.Checksum(body, castagnoli))
	return leaf
}

// leafHash is tlog.RecordHash of a framed record's body, SHA-256(0x00 ||
// body), computed in place: the byte before the body (the last byte of the
// header checksum) is set to 0x00 for the hash and then restored, so the body
// is hashed once, without a copy or a hash object per record. rec must be
// writable and not shared while this runs.
func leafHash(rec []byte) tlog.Hash {
	end := len(rec) - frameTrailer
	saved := rec[frameHeader-1]
	rec[frameHeader-1] = 0x00
	h := tlog.Hash(sha256.Sum256(rec[frameHeader-1 : end]))
	rec[frameHeader-1] = saved
	return h
}

// parseBody splits a record body into its fields.
func parseBody(body []byte) (Record, error) {
	if len(body) < bodyPrefix {
		return Record{}, fmt.Errorf("%w: %d bytes", ErrBadBody, len(body))
	}
	r := Record{Kind: body[0], Body: body, Payload: body[bodyPrefix:]}
	if r.Kind != KindEvent && r.Kind != KindCheckpoint && r.Kind != KindSegmentKey {
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

// readBufSize is the reader's buffer: large reads keep the system-call cost
// per record negligible, and records are parsed where they were read.
const readBufSize = 256 << 10

// recordReader reads framed records one by one from a stream. It parses them
// in its own buffer: a Record it returns, and the bytes it points to, are
// valid only until the next call.
type recordReader struct {
	r io.Reader
	// size, when known, is how many bytes r holds: a small log does not
	// get a large buffer.
	size       int64
	buf        []byte
	start, end int // buffered bytes not yet consumed: buf[start:end]
	eof        bool
	err        error
	// leaf: the hash of the last record returned by next (tlog.RecordHash
	// of its body), computed only when hash is set.
	hash bool
	leaf tlog.Hash
}

// fill makes n bytes available at buf[start:], reading as needed. It
// returns false when the stream ends first; read errors other than EOF are
// returned.
func (rr *recordReader) fill(n int) (bool, error) {
	for rr.end-rr.start < n {
		if rr.err != nil {
			return false, rr.err
		}
		if rr.eof {
			return false, nil
		}
		if len(rr.buf)-rr.start < n || rr.end == len(rr.buf) {
			size := max(len(rr.buf), readBufSize)
			if rr.size > 0 && rr.size < readBufSize && len(rr.buf) == 0 {
				size = int(rr.size)
			}
			for size < n {
				size *= 2
			}
			if size > len(rr.buf) {
				nb := make([]byte, size)
				rr.end = copy(nb, rr.buf[rr.start:rr.end])
				rr.buf = nb
			} else {
				rr.end = copy(rr.buf, rr.buf[rr.start:rr.end])
			}
			rr.start = 0
		}
		m, err := rr.r.Read(rr.buf[rr.end:])
		rr.end += m
		if err == io.EOF {
			rr.eof = true
		} else if err != nil {
			rr.err = err
		}
	}
	return true, nil
}

// next returns the next record and its frame size. At a clean end it returns
// io.EOF. ErrTorn is returned only when the remaining bytes are a prefix of a
// record whose header is intact, a partial header, or zeros, which is what an
// interrupted append leaves; anything else is ErrBadFrame or ErrBadChecksum.
func (rr *recordReader) next() (Record, int, error) {
	ok, err := rr.fill(frameHeader)
	if err != nil {
		return Record{}, 0, err
	}
	if !ok {
		if n := rr.end - rr.start; n > 0 {
			rr.start = rr.end
			return Record{}, n, ErrTorn
		}
		return Record{}, 0, io.EOF
	}
	hdr := rr.buf[rr.start : rr.start+frameHeader]
	length := binary.BigEndian.Uint32(hdr)
	if binary.BigEndian.Uint32(hdr[4:]) != crc32.Checksum(hdr[:4], castagnoli) {
		if allZero(hdr) && rr.restZero() {
			return Record{}, frameHeader, ErrTorn
		}
		return Record{}, frameHeader, ErrBadFrame
	}
	if length > MaxBodySize || length < bodyPrefix {
		return Record{}, frameHeader, fmt.Errorf("%w: length %d", ErrBadFrame, length)
	}
	size := frameHeader + int(length) + frameTrailer
	if ok, err := rr.fill(size); err != nil {
		return Record{}, 0, err
	} else if !ok {
		n := rr.end - rr.start
		rr.start = rr.end
		return Record{}, n, ErrTorn
	}
	rec := rr.buf[rr.start : rr.start+size]
	rr.start += size
	body := rec[frameHeader : size-frameTrailer]
	trailer := rec[size-frameTrailer:]
	if binary.BigEndian.Uint32(trailer) != crc32.Checksum(body, castagnoli) {
		// A zero trailer on the last record is what a file system that
		// extended the file but did not persist the data leaves after a
		// crash; the caller decides, since only it knows this is the end.
		if allZero(trailer) {
			return Record{}, size, errZeroTrailer
		}
		return Record{}, size, ErrBadChecksum
	}
	r, err := parseBody(body)
	if err != nil {
		return Record{}, size, err
	}
	if rr.hash {
		rr.leaf = leafHash(rec)
	}
	return r, size, nil
}

// restZero reports whether everything left in the stream (after the header
// just read) is zero bytes. It consumes the stream.
func (rr *recordReader) restZero() bool {
	for {
		if !allZero(rr.buf[rr.start:rr.end]) {
			return false
		}
		rr.start = rr.end
		if ok, err := rr.fill(1); err != nil || !ok {
			return err == nil
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
