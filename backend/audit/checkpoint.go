package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// originPrefix starts the first line of every checkpoint; the log ID follows.
const originPrefix = "yett.dev/audit/"

// Head is a tree head: the number of leaves and the RFC 6962 root over them.
type Head struct {
	Size int64
	Root tlog.Hash
}

func (h Head) String() string {
	return fmt.Sprintf("size %d root %s", h.Size, h.Root)
}

// Checkpoint is a signed tree head. Its text follows the C2SP tlog-checkpoint
// layout (origin, size, base64 root) with one extension line carrying the
// verifier key, so a checkpoint kept elsewhere is self-contained.
type Checkpoint struct {
	Head
	LogID       LogID
	VerifierKey string // note verifier key that signed it
	Text        []byte // the whole signed note, as stored
}

// ErrBadCheckpoint is returned for a checkpoint that does not parse or whose
// signature does not verify with the key it names.
var ErrBadCheckpoint = errors.New("audit: invalid checkpoint")

// checkpointBody is the signed text of a checkpoint.
func checkpointBody(id LogID, h Head, vkey string) string {
	return fmt.Sprintf("%s%s\n%d\n%s\nvkey %s\n", originPrefix, hex.EncodeToString(id[:]),
		h.Size, base64.StdEncoding.EncodeToString(h.Root[:]), vkey)
}

// signCheckpoint signs the head of log id with s.
func signCheckpoint(s note.Signer, vkey string, id LogID, h Head) (Checkpoint, error) {
	msg, err := note.Sign(&note.Note{Text: checkpointBody(id, h, vkey)}, s)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("audit: sign checkpoint: %w", err)
	}
	return Checkpoint{Head: h, LogID: id, VerifierKey: vkey, Text: msg}, nil
}

// ParseCheckpoint parses a signed checkpoint and checks its signature against
// the verifier key it carries. That alone proves only that the text is intact;
// callers compare VerifierKey with a key they trust.
func ParseCheckpoint(msg []byte) (Checkpoint, error) {
	c, v, err := parseUnverified(msg)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := checkSignature(msg, v); err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}

// parseUnverified is ParseCheckpoint without the signature check, which the
// caller owes (checkSignature with the returned verifier).
func parseUnverified(msg []byte) (Checkpoint, note.Verifier, error) {
	if len(msg) > 16<<10 {
		return Checkpoint{}, nil, fmt.Errorf("%w: too large", ErrBadCheckpoint)
	}
	body, _, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		return Checkpoint{}, nil, fmt.Errorf("%w: no signature block", ErrBadCheckpoint)
	}
	lines := strings.Split(string(body), "\n")
	if len(lines) != 4 {
		return Checkpoint{}, nil, fmt.Errorf("%w: want 4 lines, got %d", ErrBadCheckpoint, len(lines))
	}
	var c Checkpoint
	idHex, ok := strings.CutPrefix(lines[0], originPrefix)
	if !ok || len(idHex) != 2*logIDSize {
		return Checkpoint{}, nil, fmt.Errorf("%w: bad origin line", ErrBadCheckpoint)
	}
	if _, err := hex.Decode(c.LogID[:], []byte(idHex)); err != nil || idHex != strings.ToLower(idHex) {
		return Checkpoint{}, nil, fmt.Errorf("%w: bad origin line", ErrBadCheckpoint)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, nil, fmt.Errorf("%w: bad tree size", ErrBadCheckpoint)
	}
	c.Size = size
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != len(c.Root) {
		return Checkpoint{}, nil, fmt.Errorf("%w: bad root hash", ErrBadCheckpoint)
	}
	copy(c.Root[:], root)
	vkey, ok := strings.CutPrefix(lines[3], "vkey ")
	if !ok {
		return Checkpoint{}, nil, fmt.Errorf("%w: no verifier key line", ErrBadCheckpoint)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("%w: bad verifier key", ErrBadCheckpoint)
	}
	if v.Name() != keyName(c.LogID) {
		return Checkpoint{}, nil, fmt.Errorf("%w: key name does not match origin", ErrBadCheckpoint)
	}
	c.VerifierKey = vkey
	c.Text = append([]byte(nil), msg...)
	return c, v, nil
}

// checkSignature checks that msg carries exactly one signature, by v, in the
// canonical encoding.
func checkSignature(msg []byte, v note.Verifier) error {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return fmt.Errorf("%w: signature: %v", ErrBadCheckpoint, err)
	}
	if len(n.UnverifiedSigs) != 0 || len(n.Sigs) != 1 {
		return fmt.Errorf("%w: want exactly one signature", ErrBadCheckpoint)
	}
	// note decodes signatures leniently; insist on the one canonical
	// encoding so no byte of a checkpoint can change unnoticed.
	if _, err := base64.StdEncoding.Strict().DecodeString(n.Sigs[0].Base64); err != nil {
		return fmt.Errorf("%w: signature not in canonical base64", ErrBadCheckpoint)
	}
	return nil
}

// Origin is the checkpoint origin line of the log whose checkpoints the
// verifier key vkey signs ("yett.dev/audit/<log ID>"): how a witness that is
// given a machine's audit key knows which checkpoints it is for.
func Origin(vkey string) (string, error) {
	id, err := logIDFromVerifierKey(vkey)
	if err != nil {
		return "", err
	}
	return originPrefix + hex.EncodeToString(id[:]), nil
}

// keyName is the note key name for a log; it ties a key to one installation.
func keyName(id LogID) string {
	return "yett-audit-" + hex.EncodeToString(id[:])
}
