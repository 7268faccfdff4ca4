package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/tlog"
)

// Edge is the right edge of the log's tree at one size (the O(log n) hashes
// of its perfect subtrees) and where that size ends in the file. A witness
// client keeps the edge at the size a witness last cosigned: with it, the
// consistency proof to a newer checkpoint needs only the records written
// since, not the whole log.
//
// An Edge is a cache, like the tree-state file (it has the same text
// format): nothing trusts it. A proof made from a wrong edge does not fold
// to the checkpoint's root, and ProveConsistency then starts again from the
// first record.
type Edge struct {
	st treeState
}

// Head is the size and root the edge folds to.
func (e Edge) Head() Head { return Head{Size: e.st.tree.n, Root: e.st.tree.root()} }

// MarshalText encodes the edge in the tree-state format.
func (e Edge) MarshalText() ([]byte, error) { return e.st.marshal(), nil }

// ParseEdge parses what MarshalText wrote.
func ParseEdge(b []byte) (Edge, error) {
	st, err := parseTreeState(b)
	if err != nil {
		return Edge{}, err
	}
	return Edge{st: st}, nil
}

// ErrNotInLog is returned by ProveConsistency when the log in the directory
// does not hold the tree a checkpoint names: fewer records than its size,
// or records whose root differs. The checkpoint is then not this log's
// (or the log changed under it), and no proof can be made for it.
var ErrNotInLog = errors.New("audit: the log does not hold the checkpoint's tree")

// ProveConsistency returns the RFC 6962 consistency proof (tlog.ProveTree)
// from the log's tree at oldSize to the tree that checkpoint to signs, and
// the edge at to's size for the next call. from is the edge kept at the
// last call; when it is not at oldSize (or is the zero Edge, or does not
// lead to to's root) the records before oldSize are read again from the
// start of the file, hashing only.
//
// It reads records only up to to.Size, so a writer may append meanwhile.
// Errors: ErrNotInLog, I/O errors, and the framing errors of a damaged file.
func ProveConsistency(dir string, from Edge, oldSize int64, to Checkpoint) (tlog.TreeProof, Edge, error) {
	if oldSize < 0 || oldSize > to.Size {
		return nil, Edge{}, fmt.Errorf("audit: no consistency proof from size %d to %d", oldSize, to.Size)
	}
	f, err := os.Open(filepath.Join(dir, LogFile))
	if err != nil {
		return nil, Edge{}, err
	}
	defer f.Close()
	if from.st.logID == to.LogID && from.st.tree.n == oldSize && oldSize > 0 {
		// Any failure here may be the cache's (an offset or a hash from
		// before a repair): the full read below decides.
		if p, e, err := proveFrom(f, from.st, to); err == nil {
			return p, e, nil
		}
	}
	start, err := edgeAt(f, to.LogID, oldSize)
	if err != nil {
		return nil, Edge{}, err
	}
	return proveFrom(f, start, to)
}

// edgeAt reads the first n records of the log and returns the edge after
// them.
func edgeAt(f *os.File, id LogID, n int64) (treeState, error) {
	st := treeState{logID: id, lastCPRec: -1, segment: -1}
	err := readLeaves(f, &st, n, func(int64, tlog.Hash) error { return nil })
	return st, err
}

// proveFrom reads the records after the edge st up to to.Size, keeping the
// hashes tlog.ProveTree asks for: the old edge's subtrees and every stored
// hash of the new records. Those are all it needs: every node of a
// consistency proof from m to n is either a perfect subtree of the first m
// leaves that the edge at m holds, or lies wholly among leaves m to n-1.
func proveFrom(f *os.File, st treeState, to Checkpoint) (tlog.TreeProof, Edge, error) {
	st.tree = st.tree.clone() // pushing folds hashes in place: the caller's edge stays as it was
	old := Head{Size: st.tree.n, Root: st.tree.root()}
	stored := make(map[int64]tlog.Hash)
	for i, idx := range torchwood.RightEdge(old.Size) {
		stored[idx] = st.tree.stack[i]
	}
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			h, ok := stored[x]
			if !ok {
				return nil, fmt.Errorf("audit: consistency proof needs stored hash %d, which was not read", x)
			}
			out[i] = h
		}
		return out, nil
	})
	err := readLeaves(f, &st, to.Size, func(i int64, leaf tlog.Hash) error {
		hs, err := tlog.StoredHashesForRecordHash(i, leaf, reader)
		for k, h := range hs {
			stored[tlog.StoredHashIndex(0, i)+int64(k)] = h
		}
		return err
	})
	if err != nil {
		return nil, Edge{}, err
	}
	if root := st.tree.root(); root != to.Root {
		return nil, Edge{}, fmt.Errorf("%w: the checkpoint signs %s, the records give root %s", ErrNotInLog, to.Head, root)
	}
	if old.Size == 0 {
		return nil, Edge{st: st}, nil // every tree extends the empty one
	}
	p, err := tlog.ProveTree(to.Size, old.Size, reader)
	if err != nil {
		return nil, Edge{}, err
	}
	return p, Edge{st: st}, nil
}

// readLeaves reads records from st's offset until st holds n of them,
// pushing each leaf hash onto st's tree and passing it to visit first.
// Records are checked only as far as a hash needs: framing, checksums, the
// log ID and the index. Tamper evidence is Verify's job; a witness checks
// what the hashes prove.
func readLeaves(f *os.File, st *treeState, n int64, visit func(int64, tlog.Hash) error) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	rr := recordReader{r: io.NewSectionReader(f, st.offset, fi.Size()-st.offset), size: fi.Size() - st.offset, hash: true}
	for i := st.tree.n; i < n; i++ {
		rec, size, err := rr.next()
		switch {
		case err == io.EOF || errors.Is(err, ErrTorn):
			return fmt.Errorf("%w: it signs %d records, the log holds %d", ErrNotInLog, n, i)
		case err != nil:
			return fmt.Errorf("audit: record %d at offset %d: %w", i, st.offset, err)
		case rec.LogID != st.logID || rec.Index != i:
			return fmt.Errorf("%w: record %d at offset %d belongs to another log or index", ErrNotInLog, i, st.offset)
		}
		if err := visit(i, rr.leaf); err != nil {
			return err
		}
		switch rec.Kind {
		case KindCheckpoint:
			st.lastCPRec = i
		case KindSegmentKey:
			st.segment = i
		}
		st.tree.push(rr.leaf)
		st.offset += int64(size)
	}
	return nil
}
