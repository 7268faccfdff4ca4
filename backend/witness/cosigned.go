package witness

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/yettdev/yett/backend/audit"
)

// ErrNotCosigned is returned by VerifyCosignatures when a witness's
// cosignature is missing from a checkpoint.
var ErrNotCosigned = errors.New("witness: no cosignature by that witness")

// maxCosigned bounds a cosigned checkpoint: a checkpoint and a few dozen
// signature lines.
const maxCosigned = 64 << 10

// ParseCosigned returns the audit checkpoint inside a cosigned one: its text
// with the log's own signature, checked as audit.ParseCheckpoint checks
// it, without the cosignatures (which VerifyCosignatures checks).
func ParseCosigned(b []byte) (audit.Checkpoint, error) {
	if len(b) > maxCosigned {
		return audit.Checkpoint{}, fmt.Errorf("%w: too large", audit.ErrBadCheckpoint)
	}
	i := bytes.LastIndex(b, []byte("\n\n"))
	if i < 0 || !bytes.HasSuffix(b, []byte("\n")) {
		return audit.Checkpoint{}, fmt.Errorf("%w: no signature block", audit.ErrBadCheckpoint)
	}
	text, sigs := b[:i+2], b[i+2:]
	var firstErr error
	for len(sigs) > 0 {
		line, rest, _ := bytes.Cut(sigs, []byte("\n"))
		sigs = rest
		cp, err := audit.ParseCheckpoint(append(append(bytes.Clone(text), line...), '\n'))
		if err == nil {
			return cp, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return audit.Checkpoint{}, fmt.Errorf("no signature by the log's key: %w", firstErr)
}

// Cosignature is one witness's valid cosignature on a checkpoint.
type Cosignature struct {
	Witness string    // the witness's name
	Time    time.Time // when it cosigned (its clock)
}

// VerifyCosignatures checks that the checkpoint b carries a valid
// cosignature by every witness given, offline, and says when each
// cosigned. Signatures by other keys (the log's own) are not checked here.
//
// Errors: ErrNotCosigned (a witness's cosignature is missing),
// ErrBadCosignature (one fails to verify: the checkpoint or the
// cosignature was altered).
func VerifyCosignatures(b []byte, witnesses []*Verifier) ([]Cosignature, error) {
	if len(b) > maxCosigned {
		return nil, fmt.Errorf("%w: too large", ErrBadCosignature)
	}
	out := make([]Cosignature, 0, len(witnesses))
	for _, v := range witnesses {
		n, err := note.Open(b, note.VerifierList(v))
		var unverified *note.UnverifiedNoteError
		switch {
		case errors.As(err, &unverified):
			return nil, fmt.Errorf("%w: %s", ErrNotCosigned, v.Name())
		case err != nil:
			return nil, fmt.Errorf("%w: %s: %v", ErrBadCosignature, v.Name(), err)
		}
		ts, err := torchwood.CosignatureTimestamp(n.Sigs[0])
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadCosignature, v.Name(), err)
		}
		out = append(out, Cosignature{Witness: v.Name(), Time: time.Unix(ts, 0).UTC()})
	}
	return out, nil
}
