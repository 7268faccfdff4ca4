package witness

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/mod/sumdb/tlog"
)

// MaxProofLines is how many consistency proof hashes a request may carry
// (tlog-witness: a client MUST NOT send more than 63).
const MaxProofLines = 63

// MaxRequestSize bounds an add-checkpoint body: the old size line, 63 proof
// lines and a checkpoint with a few signatures fit many times over.
const MaxRequestSize = 32 << 10

// Proof is a consistency proof from the tree of OldSize leaves, the size
// the witness last cosigned, to a newer checkpoint's tree (RFC 6962
// section 2.1.2, as tlog.ProveTree makes it). OldSize 0 carries no hashes.
type Proof struct {
	OldSize int64
	Hashes  tlog.TreeProof
}

// AddCheckpoint is the body of a tlog-witness add-checkpoint request: the
// old size line, the proof lines, an empty line, and the checkpoint (a
// signed note, with every signature it carries).
type AddCheckpoint struct {
	Proof
	Checkpoint []byte
}

// ErrBadRequest is returned for a request the protocol calls malformed:
// a body that does not parse, or an old size above the checkpoint's size.
// The witness answers it with 400.
var ErrBadRequest = errors.New("witness: bad request")

// ParseAddCheckpoint parses a request body strictly: exactly one encoding
// of each number and hash is accepted, so that Marshal gives back the very
// bytes it was given (FuzzParseAddCheckpoint holds it to that). The
// checkpoint itself is parsed and checked by the witness, not here.
func ParseAddCheckpoint(body []byte) (AddCheckpoint, error) {
	var r AddCheckpoint
	if len(body) > MaxRequestSize {
		return r, fmt.Errorf("%w: body larger than %d bytes", ErrBadRequest, MaxRequestSize)
	}
	head, cp, ok := bytes.Cut(body, []byte("\n\n"))
	if !ok || len(cp) == 0 {
		return r, fmt.Errorf("%w: no empty line before the checkpoint", ErrBadRequest)
	}
	lines := bytes.Split(head, []byte("\n"))
	size, ok := bytes.CutPrefix(lines[0], []byte("old "))
	if !ok {
		return r, fmt.Errorf("%w: no old size line", ErrBadRequest)
	}
	n, err := parseSize(string(size))
	if err != nil {
		return r, err
	}
	r.OldSize = n
	if len(lines)-1 > MaxProofLines {
		return r, fmt.Errorf("%w: more than %d proof lines", ErrBadRequest, MaxProofLines)
	}
	for _, line := range lines[1:] {
		h, err := parseHash(line)
		if err != nil {
			return r, err
		}
		r.Hashes = append(r.Hashes, h)
	}
	r.Checkpoint = cp
	return r, nil
}

// Marshal encodes the request body.
func (r AddCheckpoint) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", r.OldSize)
	for _, h := range r.Hashes {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(r.Checkpoint)
	return b.Bytes()
}

// parseSize reads a tree size in ASCII decimal without leading zeros.
func parseSize(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, fmt.Errorf("%w: malformed size", ErrBadRequest)
	}
	return n, nil
}

// parseHash reads one hash in canonical standard base64.
func parseHash(line []byte) (tlog.Hash, error) {
	var h tlog.Hash
	if len(line) != base64.StdEncoding.EncodedLen(len(h)) {
		return h, fmt.Errorf("%w: malformed proof line", ErrBadRequest)
	}
	var buf [33]byte // DecodedLen(44): an unpadded line decodes to 33 bytes
	n, err := base64.StdEncoding.Strict().Decode(buf[:], line)
	if err != nil || n != len(h) {
		return h, fmt.Errorf("%w: malformed proof line", ErrBadRequest)
	}
	copy(h[:], buf[:n])
	return h, nil
}
