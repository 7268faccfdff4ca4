package witness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// State is what a witness keeps for one log: the newest tree it cosigned
// and that checkpoint as cosigned (the log's signature and the witness's
// cosignature). The zero State is a log never cosigned; a cosigned empty
// tree has size 0 and the empty tree's hash, so the two differ.
type State struct {
	Tree       tlog.Tree
	Checkpoint []byte
}

// RefusalReason says what a refused checkpoint showed.
type RefusalReason string

const (
	// RefusedRollback: the checkpoint is smaller than the tree the witness
	// cosigned: the log lost entries it had (truncated, or restored from
	// an older copy).
	RefusedRollback RefusalReason = "rollback"
	// RefusedFork: the checkpoint does not extend the tree the witness
	// cosigned (the proof fails, or the same size has another root): the
	// log's history was rewritten.
	RefusedFork RefusalReason = "fork"
)

// Refusal is a checkpoint, validly signed by the log's key, that the witness
// refused to cosign because of what it says about the log's history. It is
// evidence (tlog-witness allows a witness to keep it), and what tells a
// team's lead that a machine's log was cut or rewritten.
type Refusal struct {
	Origin     string
	Witnessed  tlog.Tree // what the witness had cosigned
	Tree       tlog.Tree // what the checkpoint signs
	OldSize    int64     // the old size the request named
	Reason     RefusalReason
	Checkpoint []byte // the checkpoint as sent, verified signatures only
	At         time.Time
}

// Store keeps each log's newest cosigned tree. Implementations: MemStore
// (tests), PGStore (PostgreSQL, a team's witness).
type Store interface {
	// Latest returns origin's state, the zero State if it was never
	// cosigned.
	Latest(ctx context.Context, origin string) (State, error)
	// Advance makes next origin's state if, and only if, its tree is
	// still old (the zero tlog.Tree: none yet): an atomic compare and
	// swap, so two requests that both checked against old cannot both
	// win, and a smaller tree can never overwrite a larger one. When old
	// is no longer the state it returns a *ConflictError with the size
	// the store holds now.
	Advance(ctx context.Context, origin string, old tlog.Tree, next State) error
	// Refuse keeps a refusal, once: the same refusal again (the same
	// trees and reason; anyone may replay an old checkpoint) is not kept
	// twice.
	Refuse(ctx context.Context, r Refusal) error
}

// ConflictError is the witness's 409 answer: the request's old size is not
// the size of the newest tree the witness cosigned for the log, Size. A
// client that lost track of it asks again with a proof from Size.
type ConflictError struct {
	Size int64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("witness: conflict: the witness last cosigned size %d", e.Size)
}

// Errors of the witness protocol, each an HTTP status of tlog-witness.
var (
	// ErrUnknownLog (404): no key is configured for the checkpoint's origin.
	ErrUnknownLog = errors.New("witness: unknown log")
	// ErrBadSignature (403): the checkpoint carries no valid signature by
	// a key the witness trusts for its origin.
	ErrBadSignature = errors.New("witness: checkpoint not signed by the log's key")
	// ErrBadProof (422): the checkpoint is not consistent with the tree
	// the witness cosigned, or a size-0 checkpoint has another root.
	ErrBadProof = errors.New("witness: checkpoint does not extend the tree the witness cosigned")
)

// MemStore is a Store in memory, for tests and for a witness that need not
// survive a restart. Safe for concurrent use.
type MemStore struct {
	mu       sync.Mutex
	logs     map[string]State
	refusals []Refusal
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore { return &MemStore{logs: map[string]State{}} }

func (m *MemStore) Latest(_ context.Context, origin string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.logs[origin]
	s.Checkpoint = slices.Clone(s.Checkpoint)
	return s, nil
}

func (m *MemStore) Advance(_ context.Context, origin string, old tlog.Tree, next State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.logs[origin]; cur.Tree != old {
		return &ConflictError{Size: cur.Tree.N}
	}
	m.logs[origin] = State{Tree: next.Tree, Checkpoint: slices.Clone(next.Checkpoint)}
	return nil
}

func (m *MemStore) Refuse(_ context.Context, r Refusal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.refusals {
		if k.Origin == r.Origin && k.Reason == r.Reason && k.Witnessed == r.Witnessed && k.Tree == r.Tree {
			return nil
		}
	}
	r.Checkpoint = slices.Clone(r.Checkpoint)
	m.refusals = append(m.refusals, r)
	return nil
}

// Refusals returns the refusals kept so far, oldest first.
func (m *MemStore) Refusals() []Refusal {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.refusals)
}
