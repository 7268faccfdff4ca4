package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// VerifyOptions says what to trust when verifying a log.
type VerifyOptions struct {
	// VerifierKey is the note verifier key to trust. Empty means the
	// verifier.key file next to the log; if that is missing too, the key
	// named by the held checkpoint or by the log's first checkpoint is used
	// and a note says so.
	VerifierKey string
	// CheckpointPath is the local checkpoint file; empty means the
	// "checkpoint" file next to the log. A missing file is a note, not an
	// error: entries after the last in-log checkpoint are then unsigned.
	CheckpointPath string
	// Held is a checkpoint saved earlier somewhere else. With it, Verify
	// proves the log still extends it, or reports truncation or rewrite.
	Held []byte
}

// Verify checks the log file at logPath without any key or network access.
// It never modifies anything. See Report for how to read the result.
func Verify(logPath string, opts VerifyOptions) Report {
	dir := filepath.Dir(logPath)
	rep := Report{FirstBad: -1, FirstBadOffset: -1}
	vkey := opts.VerifierKey
	if vkey == "" {
		k, err := ReadVerifierKey(dir)
		switch {
		case err == nil:
			vkey = k
		case errors.Is(err, fs.ErrNotExist):
			rep.Notes = append(rep.Notes, "no "+VerifierKeyFile+" next to the log: trusting the key named by the first checkpoint seen")
		default:
			rep.unreadable(err)
			return rep
		}
	}
	cpPath := opts.CheckpointPath
	if cpPath == "" {
		cpPath = filepath.Join(dir, CheckpointFile)
	}
	f, size, cpText, err := openConsistent(logPath, cpPath)
	if err != nil {
		rep.unreadable(err)
		return rep
	}
	defer f.Close()
	// The record reader buffers and parses in place: no bufio layer.
	return verifyStream(io.NewSectionReader(f, 0, size), size, cpText, vkey, opts.Held, rep).Report
}

// openConsistent opens the log and reads the checkpoint file so that the two
// agree even while a writer is appending: the checkpoint is read before and
// after the log's size is taken, and only that many bytes are verified. A
// checkpoint read before the size can only sign records inside it; one read
// after it is at least as new as every checkpoint record inside it. When both
// reads agree, both hold. cpText is nil when there is no checkpoint file.
func openConsistent(logPath, cpPath string) (f *os.File, size int64, cpText []byte, err error) {
	for attempt := 0; ; attempt++ {
		before, err := readOptional(cpPath)
		if err != nil {
			return nil, 0, nil, err
		}
		f, err := os.Open(logPath)
		if err != nil {
			return nil, 0, nil, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, nil, err
		}
		after, err := readOptional(cpPath)
		if err != nil {
			f.Close()
			return nil, 0, nil, err
		}
		if bytes.Equal(before, after) || attempt == 9 {
			return f, fi.Size(), before, nil
		}
		f.Close()
	}
}

func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// verifyStream is Verify over already opened inputs: the log bytes, the
// local checkpoint file's contents (nil when there is none), the trusted
// verifier key ("" when unknown) and an optional held checkpoint.
func verifyStream(r io.Reader, size int64, cpText []byte, vkey string, held []byte, rep Report) scanResult {
	sc := verifyStreamConfig("checkpoint file", cpText, vkey, held, &rep)
	if rep.Status != StatusIntact {
		return scanResult{Report: rep}
	}
	return scan(r, size, sc, rep)
}

// scanConfig is what scan checks the records against.
type scanConfig struct {
	vkey  string      // trusted verifier key; "" = learn from first checkpoint
	file  *Checkpoint // local checkpoint file
	held  *Checkpoint // checkpoint kept elsewhere
	visit func(index, offset int64, rec Record, h tlog.Hash) error
	// from resumes the scan after records it does not read again (Open's
	// fast path); nil scans from the first record. The file checkpoint
	// must not be older than from, or it could not be checked.
	from *scanFrom
}

// scanFrom is a point to resume a scan at: the tree of the records before
// it and what the scan would have learned reading them.
type scanFrom struct {
	tree      compactTree // of the first tree.n records
	offset    int64       // byte offset of record tree.n
	lastCPRec int64       // index of the newest checkpoint record before it, -1 if none
	segment   int64       // index of the newest segment-key record before it, -1 if none
}

type scanResult struct {
	Report
	tree      compactTree
	logID     LogID
	haveID    bool
	lastCPRec int64 // index of the newest checkpoint record, -1 if none
	segment   int64 // index of the newest segment-key record, -1 if none
	size      int64 // byte offset just past the last whole record
}

// scan reads every record of a log of the given byte size and checks framing,
// log ID, index sequence, segment structure, in-log checkpoints, the
// checkpoint file and the held checkpoint. rep carries notes and errors found
// before the scan.
func scan(r io.Reader, size int64, sc scanConfig, rep Report) scanResult {
	var sigs sigChecks
	notes := slices.Clone(rep.Notes)
	res := scanRecords(r, size, sc, rep, &sigs)
	var covered int64
	if sc.file != nil && res.Status == StatusIntact {
		covered = sc.file.Size // signature checked by ParseCheckpoint, root matched by checkFile
	}
	if res.HeldOK {
		covered = max(covered, sc.held.Size)
	}
	sigs.finish(&res, notes, covered)
	return res
}

func scanRecords(r io.Reader, size int64, sc scanConfig, rep Report, sigs *sigChecks) scanResult {
	res := scanResult{Report: rep, lastCPRec: -1, segment: -1}
	if res.Status != StatusIntact {
		return res
	}
	if sc.vkey == "" && sc.held != nil {
		sc.vkey = sc.held.VerifierKey
	}
	if sc.vkey != "" {
		if id, err := logIDFromVerifierKey(sc.vkey); err == nil {
			res.logID, res.haveID = id, true
		}
	}
	var i, off int64
	if f := sc.from; f != nil {
		res.tree, i, off, res.lastCPRec = f.tree.clone(), f.tree.n, f.offset, f.lastCPRec
		res.segment = f.segment
		res.Entries = i
	}
	segs := segmentRules{current: res.segment}
	// Roots of the tree at the sizes named by the file and held checkpoints,
	// taken as the scan passes those sizes.
	fileAt, heldAt := int64(-1), int64(-1)
	var fileRoot, heldRoot tlog.Hash
	if sc.file != nil {
		fileAt = sc.file.Size
	}
	if sc.held != nil {
		heldAt = sc.held.Size
	}
	rr := recordReader{r: r, size: size - off, hash: true}
	prevCP := i // size covered by the newest matching checkpoint
	for ; ; i++ {
		if i == fileAt {
			fileRoot = res.tree.root()
		}
		if i == heldAt {
			heldRoot = res.tree.root()
		}
		rec, n, err := rr.next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrTorn) || (errors.Is(err, errZeroTrailer) && off+int64(n) == size) {
			res.Torn = &Torn{Offset: off, Length: size - off, AfterIndex: i - 1}
			break
		}
		if err != nil {
			if isFraming(err) {
				res.tamper(i, off, fmt.Errorf("entry %d at offset %d: %w", i, off, err))
			} else {
				res.unreadable(err)
			}
			return res
		}
		if !res.haveID {
			res.logID, res.haveID = rec.LogID, true
		}
		switch {
		case rec.LogID != res.logID:
			res.tamper(i, off, fmt.Errorf("entry %d at offset %d: %w", i, off, ErrForeignRecord))
		case rec.Index != i:
			res.tamper(i, off, fmt.Errorf("entry %d at offset %d claims index %d: %w", i, off, rec.Index, ErrWrongIndex))
		default:
			if err := segs.check(rec); err != nil {
				res.tamper(i, off, fmt.Errorf("entry %d at offset %d: %w", i, off, err))
			}
		}
		if res.Status != StatusIntact {
			return res
		}
		if rec.Kind == KindCheckpoint {
			cp, v, err := checkInLog(rec, i, &res.tree, &sc)
			if err == nil {
				sigs.add(sigJob{index: i, offset: off, text: cp.Text, v: v, prev: res.Checkpoint})
			}
			if err != nil {
				// A root mismatch means some entry since the last good
				// checkpoint changed; a bad checkpoint text is this record.
				bad, badOff := i, off
				if errors.Is(err, ErrCheckpointMismatch) {
					bad, badOff = prevCP, -1
					err = fmt.Errorf("%w (an entry in [%d, %d) was altered)", err, prevCP, i)
				}
				res.tamper(bad, badOff, fmt.Errorf("checkpoint record %d at offset %d: %w", i, off, err))
				return res
			}
			res.Checkpoint, prevCP, res.lastCPRec = cp, i, i
		}
		if sc.visit != nil {
			if err := sc.visit(i, off, rec, rr.leaf); err != nil {
				res.unreadable(err)
				return res
			}
		}
		res.tree.push(rr.leaf)
		off += int64(n)
		res.Entries = i + 1
	}
	res.size = off
	res.segment = segs.current
	res.Head = Head{Size: res.tree.n, Root: res.tree.root()}
	if sc.vkey == "" && res.Entries > 0 {
		res.Notes = append(res.Notes, "the log has no checkpoint and no verifier key was found: nothing in it is signed")
	}
	res.checkFile(sc, fileRoot, prevCP)
	res.checkHeld(sc, heldRoot)
	return res
}

// checkInLog checks a checkpoint record at index i against the tree so far:
// its text, key, size and root. The caller owes the signature check
// (checkSignature with the returned verifier; see sigChecks for when scan
// makes it); when the record fails here, its signature is checked first, so
// a record whose signature is bad is reported as such.
func checkInLog(rec Record, i int64, t *compactTree, sc *scanConfig) (*Checkpoint, note.Verifier, error) {
	cp, v, err := parseUnverified(rec.Payload)
	if err != nil {
		return nil, nil, err
	}
	if sc.vkey == "" {
		sc.vkey = cp.VerifierKey // trust on first use; Verify noted it
	}
	switch {
	case cp.VerifierKey != sc.vkey:
		err = fmt.Errorf("%w: %s", ErrUntrustedCheckpoint, cp.VerifierKey)
	case cp.Size != i || cp.LogID != rec.LogID:
		err = fmt.Errorf("%w: it names size %d", ErrCheckpointMismatch, cp.Size)
	default:
		if root := t.root(); cp.Root != root {
			err = fmt.Errorf("%w: signed root %s, entries give %s", ErrCheckpointMismatch, cp.Root, root)
		}
	}
	if err != nil {
		if serr := checkSignature(rec.Payload, v); serr != nil {
			return nil, nil, serr
		}
		return nil, nil, err
	}
	return &cp, v, nil
}

// checkFile compares the local checkpoint file with the scanned log.
func (res *scanResult) checkFile(sc scanConfig, root tlog.Hash, prevCP int64) {
	c := sc.file
	if res.Status != StatusIntact {
		return
	}
	if c == nil {
		if res.Entries > 0 {
			res.Notes = append(res.Notes, "no checkpoint file next to the log: entries after the last checkpoint inside the log are not covered by a signature")
		}
		return
	}
	if sc.vkey == "" {
		sc.vkey = c.VerifierKey
	}
	switch {
	case c.VerifierKey != sc.vkey || (res.haveID && c.LogID != res.logID):
		res.tamper(-1, -1, fmt.Errorf("checkpoint file: %w: %s", ErrUntrustedCheckpoint, c.VerifierKey))
	case c.Size > res.Entries:
		res.tamper(res.Entries, res.size, fmt.Errorf("%w: checkpoint file signs %d entries, log has %d whole entries", ErrTruncated, c.Size, res.Entries))
	case root != c.Root:
		res.tamper(prevCP, -1, fmt.Errorf("checkpoint file: %w: signed %s, entries give root %s (an entry in [%d, %d) was altered)", ErrCheckpointMismatch, c.Head, root, prevCP, c.Size))
	case res.lastCPRec >= 0 && c.Size < res.lastCPRec:
		res.tamper(-1, -1, fmt.Errorf("%w: file signs %d entries, the log holds a checkpoint of %d", ErrStaleCheckpoint, c.Size, res.lastCPRec))
	default:
		if res.Checkpoint == nil || c.Size >= res.Checkpoint.Size {
			res.Checkpoint = c
		}
	}
}

// checkHeld proves the log extends a checkpoint kept elsewhere.
func (res *scanResult) checkHeld(sc scanConfig, root tlog.Hash) {
	c := sc.held
	if res.Status != StatusIntact {
		return
	}
	if c == nil {
		res.Notes = append(res.Notes, NoHeldCheckpointNote)
		return
	}
	switch {
	case c.VerifierKey != sc.vkey || (res.haveID && c.LogID != res.logID):
		res.tamper(-1, -1, fmt.Errorf("%w: held checkpoint was signed by %s, this log by %s: the log was replaced", ErrRewritten, c.VerifierKey, sc.vkey))
	case c.Size > res.Entries:
		res.tamper(res.Entries, res.size, fmt.Errorf("%w: held checkpoint %s, log now %s", ErrTruncated, c.Head, res.Head))
	case root != c.Root:
		res.tamper(0, -1, fmt.Errorf("%w: held checkpoint %s, log at that size has root %s (log now %s)", ErrRewritten, c.Head, root, res.Head))
	default:
		res.HeldOK = true
	}
}

func isFraming(err error) bool {
	return errors.Is(err, ErrBadFrame) || errors.Is(err, ErrBadChecksum) || errors.Is(err, ErrBadBody)
}

func logIDFromVerifierKey(vkey string) (LogID, error) {
	for i := 0; i < len(vkey); i++ {
		if vkey[i] == '+' {
			return logIDFromKeyName(vkey[:i])
		}
	}
	return LogID{}, errors.New("audit: malformed verifier key")
}
