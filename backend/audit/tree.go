package audit

import (
	"crypto/sha256"

	"golang.org/x/mod/sumdb/tlog"
)

// compactTree is the right edge of an RFC 6962 tree: the roots of the perfect
// subtrees that make up the first n leaves, largest first. It gives the tree
// hash of any prefix in O(log n) memory while the log streams past, which is
// all the writer and the verifier need; proofs for exports are built from the
// full stored hashes instead (see export.go).
type compactTree struct {
	n     int64
	stack []tlog.Hash // stack[i] covers a perfect subtree; sizes decrease
}

// push adds the record hash of leaf n.
func (t *compactTree) push(h tlog.Hash) {
	t.stack = append(t.stack, h)
	// Leaf n completes one subtree per trailing one bit of n.
	for m := t.n; m&1 == 1; m >>= 1 {
		k := len(t.stack)
		t.stack[k-2] = tlog.NodeHash(t.stack[k-2], t.stack[k-1])
		t.stack = t.stack[:k-1]
	}
	t.n++
}

// root returns the RFC 6962 tree hash of the leaves pushed so far, the same
// value tlog.TreeHash gives.
func (t *compactTree) root() tlog.Hash {
	if len(t.stack) == 0 {
		return sha256.Sum256(nil) // RFC 6962 hash of the empty tree
	}
	h := t.stack[len(t.stack)-1]
	for i := len(t.stack) - 2; i >= 0; i-- {
		h = tlog.NodeHash(t.stack[i], h)
	}
	return h
}

func (t *compactTree) clone() compactTree {
	return compactTree{n: t.n, stack: append([]tlog.Hash(nil), t.stack...)}
}
