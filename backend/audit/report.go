package audit

import (
	"errors"
	"fmt"
)

// Status is the verdict of a verification.
type Status int

const (
	// StatusIntact: every record checked; a torn tail, if any, is reported
	// in Report.Torn and is not evidence of tampering.
	StatusIntact Status = iota
	// StatusTampered: the files contradict themselves or a held checkpoint.
	// Report.Err says how and Report.FirstBad where.
	StatusTampered
	// StatusUnreadable: an I/O error or a missing file stopped the check.
	// Nothing is claimed about the log's integrity.
	StatusUnreadable
)

func (s Status) String() string {
	switch s {
	case StatusIntact:
		return "intact"
	case StatusTampered:
		return "tampered"
	default:
		return "unreadable"
	}
}

// Reasons a log is reported tampered. Report.Err wraps exactly one of these
// (or one of the framing errors ErrBadFrame, ErrBadChecksum, ErrBadBody), so
// callers can branch with errors.Is.
var (
	ErrWrongIndex          = errors.New("audit: record index out of sequence (entry deleted, duplicated or reordered)")
	ErrForeignRecord       = errors.New("audit: record belongs to another log")
	ErrCheckpointMismatch  = errors.New("audit: entries do not match a signed checkpoint")
	ErrUntrustedCheckpoint = errors.New("audit: checkpoint signed by an unexpected key")
	ErrTruncated           = errors.New("audit: log is shorter than a signed checkpoint")
	ErrStaleCheckpoint     = errors.New("audit: checkpoint file is older than a checkpoint in the log")
	ErrRewritten           = errors.New("audit: log does not extend the held checkpoint")
	ErrBadSegment          = errors.New("audit: entry is not sealed under the segment key before it")
)

// ErrUnreadable wraps the I/O error in Report.Err for StatusUnreadable.
var ErrUnreadable = errors.New("audit: log unreadable")

// NoHeldCheckpointNote is the exact caveat Verify adds when it was given no
// checkpoint kept elsewhere. Tests pin this wording; the CLI prints it.
const NoHeldCheckpointNote = "no earlier checkpoint given: this proves the log matches its own signed " +
	"checkpoints, not that it is the log you saw before. Without a checkpoint kept elsewhere, " +
	"verify cannot detect entries removed from the end together with the checkpoint file " +
	"being rolled back, nor a full rewrite by someone who holds the signing key or replaced it " +
	"(keep one with `yett audit checkpoint --out FILE`, then verify with --checkpoint FILE)"

// Torn describes an incomplete last record, as an interrupted append leaves.
type Torn struct {
	Offset     int64 // where the incomplete record starts
	Length     int64 // bytes from Offset to the end of the file
	AfterIndex int64 // index of the last whole record, -1 if none
}

// Report is the result of Verify.
type Report struct {
	Status  Status
	Entries int64 // whole records read and checked
	Head    Head  // tree head over those records (as far as they were read)
	// FirstBad is the index of the first record that is wrong, -1 if none.
	// When a root mismatch cannot name one record, it is the first index not
	// covered by the last checkpoint that did match.
	FirstBad       int64
	FirstBadOffset int64 // byte offset of FirstBad's record when known, else -1
	Err            error // why, when Status is not StatusIntact
	Torn           *Torn
	// Checkpoint is the newest signed checkpoint that matched the log.
	Checkpoint *Checkpoint
	// Held is the checkpoint given in VerifyOptions, if any; HeldOK says the
	// log was proven to extend it.
	Held   *Checkpoint
	HeldOK bool
	Notes  []string // caveats in plain words, e.g. NoHeldCheckpointNote
}

func (r *Report) tamper(index, offset int64, err error) {
	if r.Status == StatusIntact {
		r.Status, r.FirstBad, r.FirstBadOffset, r.Err = StatusTampered, index, offset, err
	}
}

func (r *Report) unreadable(err error) {
	r.Status, r.Err = StatusUnreadable, fmt.Errorf("%w: %w", ErrUnreadable, err)
}
