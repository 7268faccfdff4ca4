package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// TreeStateFile holds what Open needs to append without reading the whole
// log: the compact tree (the O(log n) hashes of the tree's right edge) at a
// size the writer checkpointed, and where that size ends in the file. It is
// not signed and needs no signature: Open trusts it only after the hashes
// fold to the root of a signed checkpoint (see Open), and a file that does
// not parse or does not match is ignored (the whole log is verified instead).
const TreeStateFile = "tree-state"

const treeStateMagic = "yett-audit-tree-state v1"

// treeState is the parsed tree-state file.
type treeState struct {
	logID     LogID
	tree      compactTree
	offset    int64 // byte offset of record tree.n
	lastCPRec int64 // newest checkpoint record before tree.n, -1 if none
	segment   int64 // newest segment-key record before tree.n, -1 if none
}

// errBadTreeState is returned for a tree-state file that does not parse.
var errBadTreeState = errors.New("audit: malformed tree state")

func (s *treeState) marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nlog %s\nsize %d\noffset %d\ncheckpoint %d\nsegment %d\n", treeStateMagic,
		hex.EncodeToString(s.logID[:]), s.tree.n, s.offset, s.lastCPRec, s.segment)
	for _, h := range s.tree.stack {
		b.WriteString("hash " + base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	return b.Bytes()
}

// parseTreeState parses a tree-state file strictly: one encoding only, and
// exactly as many hashes as a tree of that size has perfect subtrees.
func parseTreeState(b []byte) (treeState, error) {
	var s treeState
	if len(b) > 8<<10 || !bytes.HasSuffix(b, []byte("\n")) {
		return s, errBadTreeState
	}
	lines := strings.Split(string(b[:len(b)-1]), "\n")
	if len(lines) < 6 || lines[0] != treeStateMagic {
		return s, errBadTreeState
	}
	field := func(line, name string) (string, bool) {
		return strings.CutPrefix(line, name+" ")
	}
	idHex, ok := field(lines[1], "log")
	if !ok || len(idHex) != 2*logIDSize || strings.ToLower(idHex) != idHex {
		return s, errBadTreeState
	}
	if _, err := hex.Decode(s.logID[:], []byte(idHex)); err != nil {
		return s, errBadTreeState
	}
	nums := make([]int64, 4)
	for i, name := range []string{"size", "offset", "checkpoint", "segment"} {
		v, ok := field(lines[2+i], name)
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || strconv.FormatInt(n, 10) != v || n < -1 || n > 1<<62 {
			return s, errBadTreeState
		}
		nums[i] = n
	}
	size, offset := nums[0], nums[1]
	s.offset, s.lastCPRec, s.segment = offset, nums[2], nums[3]
	if size < 0 || offset < 0 || s.lastCPRec >= size || s.segment >= size ||
		size > offset/(frameHeader+bodyPrefix+frameTrailer) || (size == 0) != (offset == 0) {
		return s, errBadTreeState
	}
	hashes := lines[6:]
	if len(hashes) != bits.OnesCount64(uint64(size)) {
		return s, errBadTreeState
	}
	s.tree = compactTree{n: size, stack: make([]tlog.Hash, len(hashes))}
	for i, line := range hashes {
		v, ok := field(line, "hash")
		h, err := base64.StdEncoding.Strict().DecodeString(v)
		if !ok || err != nil || len(h) != len(tlog.Hash{}) {
			return s, errBadTreeState
		}
		copy(s.tree.stack[i][:], h)
	}
	return s, nil
}

// readTreeState reads dir's tree-state file; a missing one is not an error.
func readTreeState(dir string) (*treeState, error) {
	b, err := os.ReadFile(filepath.Join(dir, TreeStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := parseTreeState(b)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// writeTreeState replaces dir's tree-state file. It is written to a
// temporary file and renamed, so a reader never sees half of one, but not
// fsynced: it is a cache that Open checks against a signed checkpoint before
// using, so losing it in a crash costs one full verification at the next
// Open, never a wrong result, and two more fsyncs per checkpoint would be
// paid on every checkpoint for nothing.
func writeTreeState(dir string, s *treeState) error {
	f, err := os.CreateTemp(dir, "."+TreeStateFile+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(s.marshal())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, TreeStateFile))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
