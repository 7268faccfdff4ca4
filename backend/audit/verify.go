package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

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
	return verifyStream(bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20), size, cpText, vkey, opts.Held, rep).Report
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
}

type scanResult struct {
	Report
	tree      compactTree
	logID     LogID
	haveID    bool
	lastCPRec int64 // index of the newest checkpoint record, -1 if none
	size      int64 // byte offset just past the last whole record
}

// scan reads every record of a log of the given byte size and checks framing,
// log ID, index sequence, in-log checkpoints, the checkpoint file and the
// held checkpoint. rep carries notes and errors found before the scan.
func scan(r io.Reader, size int64, sc scanConfig, rep Report) scanResult {
	res := scanResult{Report: rep, lastCPRec: -1}
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
	// Roots of the tree at the sizes named by the file and held checkpoints,
	// taken as the scan passes those sizes.
	snap := map[int64]*tlog.Hash{}
	for _, c := range []*Checkpoint{sc.file, sc.held} {
		if c != nil {
			snap[c.Size] = new(tlog.Hash)
		}
	}
	rr := recordReader{r: r}
	var off int64
	var prevCP int64 // size covered by the newest matching checkpoint
	for i := int64(0); ; i++ {
		if h, ok := snap[i]; ok {
			*h = res.tree.root()
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
		}
		if res.Status != StatusIntact {
			return res
		}
		if rec.Kind == KindCheckpoint {
			cp, err := checkInLog(rec, i, &res.tree, &sc)
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
		h := tlog.RecordHash(rec.Body)
		if sc.visit != nil {
			if err := sc.visit(i, off, rec, h); err != nil {
				res.unreadable(err)
				return res
			}
		}
		res.tree.push(h)
		off += int64(n)
		res.Entries = i + 1
	}
	res.size = off
	res.Head = Head{Size: res.tree.n, Root: res.tree.root()}
	if sc.vkey == "" && res.Entries > 0 {
		res.Notes = append(res.Notes, "the log has no checkpoint and no verifier key was found: nothing in it is signed")
	}
	res.checkFile(sc, snap, prevCP)
	res.checkHeld(sc, snap)
	return res
}

// checkInLog verifies a checkpoint record at index i against the tree so far.
func checkInLog(rec Record, i int64, t *compactTree, sc *scanConfig) (*Checkpoint, error) {
	cp, err := ParseCheckpoint(rec.Payload)
	if err != nil {
		return nil, err
	}
	if sc.vkey == "" {
		sc.vkey = cp.VerifierKey // trust on first use; Verify noted it
	}
	if cp.VerifierKey != sc.vkey {
		return nil, fmt.Errorf("%w: %s", ErrUntrustedCheckpoint, cp.VerifierKey)
	}
	if cp.Size != i || cp.LogID != rec.LogID {
		return nil, fmt.Errorf("%w: it names size %d", ErrCheckpointMismatch, cp.Size)
	}
	if root := t.root(); cp.Root != root {
		return nil, fmt.Errorf("%w: signed root %s, entries give %s", ErrCheckpointMismatch, cp.Root, root)
	}
	return &cp, nil
}

// checkFile compares the local checkpoint file with the scanned log.
func (res *scanResult) checkFile(sc scanConfig, snap map[int64]*tlog.Hash, prevCP int64) {
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
	case *snap[c.Size] != c.Root:
		res.tamper(prevCP, -1, fmt.Errorf("checkpoint file: %w: signed %s, entries give root %s (an entry in [%d, %d) was altered)", ErrCheckpointMismatch, c.Head, *snap[c.Size], prevCP, c.Size))
	case res.lastCPRec >= 0 && c.Size < res.lastCPRec:
		res.tamper(-1, -1, fmt.Errorf("%w: file signs %d entries, the log holds a checkpoint of %d", ErrStaleCheckpoint, c.Size, res.lastCPRec))
	default:
		if res.Checkpoint == nil || c.Size >= res.Checkpoint.Size {
			res.Checkpoint = c
		}
	}
}

// checkHeld proves the log extends a checkpoint kept elsewhere.
func (res *scanResult) checkHeld(sc scanConfig, snap map[int64]*tlog.Hash) {
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
	case *snap[c.Size] != c.Root:
		res.tamper(0, -1, fmt.Errorf("%w: held checkpoint %s, log at that size has root %s (log now %s)", ErrRewritten, c.Head, *snap[c.Size], res.Head))
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
