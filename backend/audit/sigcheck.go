package audit

import (
	"fmt"

	"golang.org/x/mod/sumdb/note"
)

// sigChecks decides which checkpoint-record signatures a scan must check
// itself. After SHA-256, Ed25519 verification is the largest cost of
// verifying a log (one per checkpoint record, every few thousand records), and most
// of those checks prove nothing new: a checkpoint whose signature is valid
// and whose root matches the records before it proves that every one of
// those records, checkpoint records included, is byte for byte what the
// signer's tree held, so their signatures are the signer's own. So scan
// checks the root of every checkpoint record as it passes, and afterwards
// the signatures of only the checkpoints no verified root covers (usually
// none: the checkpoint file covers all but the newest). When anything
// failed, it checks them all, in order, so that a checkpoint record whose
// signature is bad is named as the first bad record, wherever the scan
// noticed the damage.
type sigChecks struct {
	pending []sigJob // in index order
}

type sigJob struct {
	index, offset int64
	text          []byte
	v             note.Verifier
	prev          *Checkpoint // the report's newest good checkpoint before this one
}

func (c *sigChecks) add(j sigJob) { c.pending = append(c.pending, j) }

// finish checks what must be checked and, if a signature is bad, makes res
// the report the scan would have made stopping at that record. notes are
// the report's notes from before the scan. covered is the size proven by a
// signed root that matched (checkpoint file or held checkpoint), 0 if none.
func (c *sigChecks) finish(res *scanResult, notes []string, covered int64) {
	jobs := c.pending
	if res.Status == StatusIntact {
		for len(jobs) > 0 && jobs[0].index < covered {
			jobs = jobs[1:]
		}
		// The newest checkpoint covers the older ones the same way.
		if len(jobs) == 0 || checkSignature(jobs[len(jobs)-1].text, jobs[len(jobs)-1].v) == nil {
			return
		}
	}
	for _, j := range jobs {
		if err := checkSignature(j.text, j.v); err != nil {
			r := &res.Report
			r.Status, r.Err = StatusIntact, nil
			r.Entries, r.Head, r.Torn, r.Checkpoint, r.HeldOK, r.Notes = j.index, Head{}, nil, j.prev, false, notes
			r.tamper(j.index, j.offset, fmt.Errorf("checkpoint record %d at offset %d: %w", j.index, j.offset, err))
			return
		}
	}
}
