package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// State is where a call is in its life.
type State string

const (
	// StateIntent is a call accepted and not sent. Journals written before
	// the gateway recorded "dispatched" in one step hold such rows; a new
	// call never goes through it.
	StateIntent        State = "intent"
	StateNotDispatched State = "not_dispatched" // refused after it was recorded; nothing was sent
	StateDispatched    State = "dispatched"     // handed to the network; outcome not yet recorded
	StateResult        State = "result"         // outcome recorded
)

// MaxKeyLen is the longest idempotency key an agent may give.
const MaxKeyLen = 128

// KeyAlphabet reports whether k uses only the characters an idempotency key
// may hold: ASCII letters, digits and . _ : - (a key is echoed back to
// agents and stored as a column, so nothing that needs quoting).
func KeyAlphabet(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// Intent is what the gateway knows about a call before anything is sent.
type Intent struct {
	ID            string // gateway-made request id
	Scope         string // origin executable identity (see the package doc)
	Key           string // agent-supplied or gateway-made idempotency key
	BootID        string
	RunID         string
	Method        string
	Target        string // host[:port]
	Path          string // URL path, no query
	CredentialRef string // credential id, never its value
	RequestBytes  int64
	RequestSHA256 string
}

// Result is the recorded outcome of a dispatched call: no body, no headers.
type Result struct {
	Status         int
	Class          string
	ResponseBytes  int64
	ResponseSHA256 string
	Truncated      bool
}

// Entry is one call as the journal holds it.
type Entry struct {
	Intent
	State     State
	Reason    string
	Result    Result
	CreatedAt time.Time
	UpdatedAt time.Time
}

const callColumns = `id, scope, idem_key, state, boot_id, run_id, method, target, path, credential_ref,
	request_bytes, request_sha256, reason, status, class, response_bytes, response_sha256, truncated,
	created_unix_nano, updated_unix_nano`

func scanEntry(row interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var state string
	var created, updated int64
	err := row.Scan(&e.ID, &e.Scope, &e.Key, &state, &e.BootID, &e.RunID, &e.Method, &e.Target, &e.Path,
		&e.CredentialRef, &e.RequestBytes, &e.RequestSHA256, &e.Reason, &e.Result.Status, &e.Result.Class,
		&e.Result.ResponseBytes, &e.Result.ResponseSHA256, &e.Result.Truncated, &created, &updated)
	e.State = State(state)
	e.CreatedAt, e.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return e, err
}

// Dispatch records, durably, that a call is about to leave: the caller
// sends the request only after it returns nil. There is no step between
// "accepted" and "dispatched" on disk: a call whose dispatch record is not
// durable was not sent, so after a crash a key with no record is as safe to
// retry as one marked not_dispatched.
//
// A key names one request (RequestSHA256): a key already used for another
// request is refused with ErrKeyReused, and nothing about the earlier call
// is returned. A key used before for the same request may be reused only
// when its earlier call provably never left (not_dispatched, or an intent
// of an earlier boot): that call is replaced. Otherwise Dispatch returns
// ErrKeyInUse together with the earlier entry, and nothing is written.
//
// A ctx already done returns its error and writes nothing; once the record
// is queued, Dispatch waits for its outcome whatever ctx does, because it
// may become durable.
func (j *Journal) Dispatch(ctx context.Context, in Intent) (*Entry, error) {
	prev, durable, err := j.DispatchQueued(ctx, in)
	if err != nil {
		return prev, err
	}
	return nil, durable()
}

// DispatchQueued checks the key and queues the dispatch record as Dispatch
// does, and returns without waiting: durable waits for the record (the
// caller sends nothing before it returns nil, and must call it). Whatever
// the caller makes durable in between, a carried audit record above all,
// shares the one group commit: the gateway queues a call's dispatch, then
// appends its audit intent, whose wait covers both.
func (j *Journal) DispatchQueued(ctx context.Context, in Intent) (prev *Entry, durable func() error, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	now := time.Now().UTC()
	e := &Entry{Intent: in, State: StateDispatched, CreatedAt: now, UpdatedAt: now}
	fr, err := frame(e)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: dispatch: %w", err)
	}
	k := callKey{in.Scope, in.Key}
	j.mu.Lock()
	old, err := j.findLocked(k)
	if err != nil {
		j.mu.Unlock()
		return nil, nil, fmt.Errorf("journal: dispatch: %w", err)
	}
	if old != nil {
		if old.RequestSHA256 != in.RequestSHA256 {
			j.mu.Unlock()
			return nil, nil, ErrKeyReused
		}
		if old.State == StateDispatched || old.State == StateResult || (old.State == StateIntent && old.BootID == in.BootID) {
			prev := *old
			j.mu.Unlock()
			return &prev, nil, ErrKeyInUse
		}
		if cur := j.live[k]; cur != nil {
			delete(j.byID, cur.ID)
		}
	}
	seq, err := j.wal.append(fr)
	if err != nil {
		j.mu.Unlock()
		return nil, nil, fmt.Errorf("journal: dispatch: %w", err)
	}
	j.live[k], j.byID[e.ID] = e, e
	j.seqOf[e.ID] = seq
	j.mu.Unlock()
	return nil, func() error {
		if err := j.wal.wait(seq); err != nil {
			// Not durable, so not to be sent, and not to be found either.
			j.mu.Lock()
			if j.byID[e.ID] == e {
				delete(j.byID, e.ID)
				delete(j.live, k)
				delete(j.seqOf, e.ID)
			}
			j.mu.Unlock()
			return fmt.Errorf("journal: dispatch: %w", err)
		}
		return nil
	}, nil
}

// findLocked returns the call named by k: from the log's calls, else from
// the database unless the key filter says it was never there. j.mu held:
// checking and recording a key is one step.
func (j *Journal) findLocked(k callKey) (*Entry, error) {
	if e := j.live[k]; e != nil {
		return e, nil
	}
	if j.keys != nil && !j.keys.maybe(k) {
		return nil, nil
	}
	e, err := scanEntry(j.stmts.byKey.QueryRow(k.scope, k.key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// NotSent records that a call recorded as dispatched did not leave after
// all: its audit entry could not be written, or the executor refused it
// before a byte was sent. Only facts that provably precede sending may lead
// here.
func (j *Journal) NotSent(ctx context.Context, id, reason string) error {
	return j.move(id, StateNotDispatched, func(e *Entry) { e.Reason = reason }, true)
}

// Finish records the outcome of a dispatched call, durably.
func (j *Journal) Finish(ctx context.Context, id string, r Result) error {
	return j.move(id, StateResult, func(e *Entry) { e.Result = r }, true)
}

// FinishSoon records the outcome of a dispatched call and returns once the
// record is queued: it becomes durable with the next group commit (which
// the next call's Dispatch usually leads), and at the latest within
// 2×Options.ResultDelay, or at Close. Lookup sees it at once. A crash
// before then loses only the result: the call reads as dispatched by an
// earlier process (STATUS_UNKNOWN), never as not sent and never as
// unknown to the journal, and its key stays in use. A write that fails
// later breaks the log, so the next Dispatch is refused.
func (j *Journal) FinishSoon(ctx context.Context, id string, r Result) error {
	return j.move(id, StateResult, func(e *Entry) { e.Result = r }, false)
}

// move takes a call of this process from dispatched to state: durably when
// wait is set, else queued for the next group commit. Entries are
// replaced, never changed in place: a Lookup may be holding the old one.
func (j *Journal) move(id string, to State, set func(*Entry), wait bool) error {
	j.mu.Lock()
	old := j.byID[id]
	if old == nil || old.State != StateDispatched {
		j.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrBadState, to)
	}
	e := *old
	e.State, e.UpdatedAt = to, time.Now().UTC()
	set(&e)
	fr, err := frame(&e)
	if err != nil {
		j.mu.Unlock()
		return fmt.Errorf("journal: %s: %w", to, err)
	}
	seq, err := j.wal.append(fr)
	if err != nil {
		j.mu.Unlock()
		return fmt.Errorf("journal: %s: %w", to, err)
	}
	j.live[callKey{e.Scope, e.Key}], j.byID[id] = &e, &e
	j.seqOf[id] = seq
	j.dirty = true
	if j.finals++; j.finals == foldAt {
		select {
		case j.foldNow <- struct{}{}:
		default:
		}
	}
	j.mu.Unlock()
	if !wait {
		j.wal.soon()
		return nil
	}
	if err := j.wal.wait(seq); err != nil {
		return fmt.Errorf("journal: %s: %w", to, err)
	}
	return nil
}

// Lookup returns the call named by key in scope, or ErrNotFound.
func (j *Journal) Lookup(ctx context.Context, scope, key string) (Entry, error) {
	k := callKey{scope, key}
	j.mu.Lock()
	if e := j.live[k]; e != nil {
		out := *e
		j.mu.Unlock()
		return out, nil
	}
	j.mu.Unlock()
	// Not in the log's calls: a call folded into the database is deleted
	// from them only after the database holds it.
	e, err := scanEntry(j.stmts.byKey.QueryRowContext(ctx, scope, key))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("journal: lookup: %w", err)
	}
	return e, nil
}

// statements are the calls table's statements, prepared once.
type statements struct {
	byKey *sql.Stmt
}

func prepare(db *sql.DB) (*statements, error) {
	st, err := db.Prepare(`SELECT ` + callColumns + ` FROM journal_calls WHERE scope = ? AND idem_key = ?`)
	if err != nil {
		return nil, err
	}
	return &statements{byKey: st}, nil
}

func (s *statements) close() { s.byKey.Close() }
