package journal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// State is where a call is in its life.
type State string

const (
	StateIntent        State = "intent"         // accepted, nothing sent yet
	StateNotDispatched State = "not_dispatched" // refused after the intent; nothing was sent
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

type callRow struct {
	ID              string
	Scope           string
	IdemKey         string
	State           string
	BootID          string
	RunID           string
	Method          string
	Target          string
	Path            string
	CredentialRef   string
	RequestBytes    int64
	RequestSha256   string
	Reason          string
	Status          int
	Class           string
	ResponseBytes   int64
	ResponseSha256  string
	Truncated       bool
	CreatedUnixNano int64
	UpdatedUnixNano int64
}

func (callRow) TableName() string { return "journal_calls" }

func (r callRow) entry() Entry {
	return Entry{
		Intent: Intent{
			ID: r.ID, Scope: r.Scope, Key: r.IdemKey, BootID: r.BootID, RunID: r.RunID,
			Method: r.Method, Target: r.Target, Path: r.Path, CredentialRef: r.CredentialRef,
			RequestBytes: r.RequestBytes, RequestSHA256: r.RequestSha256,
		},
		State:  State(r.State),
		Reason: r.Reason,
		Result: Result{Status: r.Status, Class: r.Class, ResponseBytes: r.ResponseBytes,
			ResponseSHA256: r.ResponseSha256, Truncated: r.Truncated},
		CreatedAt: time.Unix(0, r.CreatedUnixNano).UTC(),
		UpdatedAt: time.Unix(0, r.UpdatedUnixNano).UTC(),
	}
}

// Begin records a call's intent. A key names one request (RequestSHA256): a
// key already used for another request is refused with ErrKeyReused, and
// nothing about the earlier call is returned. A key used before for the
// same request may be reused only when its earlier call provably never
// left (intent or not_dispatched): that row is replaced. Otherwise Begin
// returns ErrKeyInUse together with the earlier entry, and nothing is
// written.
func (j *Journal) Begin(ctx context.Context, in Intent) (*Entry, error) {
	now := time.Now().UnixNano()
	var prev *Entry
	err := j.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old callRow
		err := tx.Where("scope = ? AND idem_key = ?", in.Scope, in.Key).Take(&old).Error
		switch {
		case err == nil:
			if old.RequestSha256 != in.RequestSHA256 {
				return ErrKeyReused
			}
			if State(old.State) == StateDispatched || State(old.State) == StateResult {
				e := old.entry()
				prev = &e
				return ErrKeyInUse
			}
			if State(old.State) == StateIntent && old.BootID == in.BootID {
				// In flight in this boot (held for an approval, or
				// between intent and dispatch): not a retry yet.
				e := old.entry()
				prev = &e
				return ErrKeyInUse
			}
			if err := tx.Delete(&callRow{}, "id = ?", old.ID).Error; err != nil {
				return err
			}
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return err
		}
		return tx.Create(&callRow{
			ID: in.ID, Scope: in.Scope, IdemKey: in.Key, State: string(StateIntent),
			BootID: in.BootID, RunID: in.RunID, Method: in.Method, Target: in.Target, Path: in.Path,
			CredentialRef: in.CredentialRef, RequestBytes: in.RequestBytes, RequestSha256: in.RequestSHA256,
			CreatedUnixNano: now, UpdatedUnixNano: now,
		}).Error
	})
	if errors.Is(err, ErrKeyInUse) {
		return prev, ErrKeyInUse
	}
	if errors.Is(err, ErrKeyReused) {
		return nil, ErrKeyReused
	}
	if err != nil {
		return nil, fmt.Errorf("journal: begin: %w", err)
	}
	return nil, nil
}

// Dispatched commits that the call is about to leave. The caller sends the
// request only after this returns nil.
func (j *Journal) Dispatched(ctx context.Context, id string) error {
	return j.move(ctx, id, StateIntent, StateDispatched, map[string]any{})
}

// NotDispatched commits that the call was refused after its intent and that
// nothing was sent.
func (j *Journal) NotDispatched(ctx context.Context, id, reason string) error {
	return j.move(ctx, id, StateIntent, StateNotDispatched, map[string]any{"reason": reason})
}

// Refused commits that a dispatched call was stopped by the executor before
// anything was sent (a refused target or header, the secret unavailable).
// Only errors that provably precede sending may lead here.
func (j *Journal) Refused(ctx context.Context, id, reason string) error {
	return j.move(ctx, id, StateDispatched, StateNotDispatched, map[string]any{"reason": reason})
}

// Finish records the outcome of a dispatched call.
func (j *Journal) Finish(ctx context.Context, id string, r Result) error {
	return j.move(ctx, id, StateDispatched, StateResult, map[string]any{
		"status": r.Status, "class": r.Class, "response_bytes": r.ResponseBytes,
		"response_sha256": r.ResponseSHA256, "truncated": r.Truncated,
	})
}

func (j *Journal) move(ctx context.Context, id string, from, to State, set map[string]any) error {
	set["state"] = string(to)
	set["updated_unix_nano"] = time.Now().UnixNano()
	res := j.db.WithContext(ctx).Model(&callRow{}).Where("id = ? AND state = ?", id, string(from)).Updates(set)
	if res.Error != nil {
		return fmt.Errorf("journal: %s: %w", to, res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: %s -> %s", ErrBadState, from, to)
	}
	return nil
}

// Lookup returns the call named by key in scope, or ErrNotFound.
func (j *Journal) Lookup(ctx context.Context, scope, key string) (Entry, error) {
	var r callRow
	err := j.db.WithContext(ctx).Where("scope = ? AND idem_key = ?", scope, key).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("journal: lookup: %w", err)
	}
	return r.entry(), nil
}
