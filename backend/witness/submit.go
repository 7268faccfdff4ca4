package witness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// Names of the files a Submitter keeps in its state directory.
const (
	// CosignedFile is the newest checkpoint the witness cosigned: the
	// log's signature and the witness's cosignature. `yett audit verify
	// --checkpoint` takes it as a held checkpoint.
	CosignedFile = "cosigned"
	// EdgeFile is the tree's edge at that checkpoint's size (audit.Edge),
	// a cache: the next proof reads only the records after it.
	EdgeFile = "edge"
	// RefusedFile is the last refusal recorded in the log (JSON
	// audit.WitnessFacts without a size), so that a refusal is recorded
	// once across restarts of Yett too, not once per unlock; removed by
	// the next cosignature.
	RefusedFile = "refused"
)

// DefaultRetry is how long Run waits before it tries a witness it could
// not reach again (a later checkpoint also tries at once).
const DefaultRetry = time.Minute

// ErrRollback is returned by Submit when the log's newest checkpoint is
// smaller than the one this witness cosigned: entries the witness saw are
// gone.
var ErrRollback = errors.New("witness: the log is smaller than the checkpoint the witness cosigned")

// Submitter has one witness cosign the checkpoints of the audit log in Dir.
// Submit sends the newest one; Run does it after every checkpoint the log
// signs. One Submitter per log and witness; its methods are safe for
// concurrent use.
type Submitter struct {
	// Dir is the audit log's directory.
	Dir string
	// Client is the witness.
	Client *Client
	// StateDir keeps what the witness cosigned (CosignedFile, EdgeFile);
	// "" is StateDirFor(Dir, the witness's key).
	StateDir string
	// Log records a refusal of the witness (checkpoint_refused); nil
	// records nothing.
	Log *audit.Log
	// Cosigned is told each checkpoint newly cosigned, in order: the team
	// core publishes it. Called outside any lock of the Submitter's.
	Cosigned func(cosigned []byte)
	// Refused is told each refusal as it is recorded in Log (once per
	// refusal), with the checkpoint refused: the team core publishes it.
	// Called with the Submitter's lock held: it must not call back.
	Refused func(cp audit.Checkpoint, f audit.WitnessFacts)
	// Retry is Run's first wait after the witness could not be reached,
	// doubled at each failure up to MaxRetry: see DefaultRetry and
	// DefaultMaxRetry.
	Retry, MaxRetry time.Duration
	// Logger is told each change of Run's outcome; nil logs nothing.
	Logger *slog.Logger

	mu sync.Mutex
	// refused is the last refusal recorded, so that one refusal is
	// recorded once however many checkpoints it refuses.
	refused audit.WitnessFacts
}

// StateDirFor is where a Submitter keeps its state for the log in dir and
// the witness with verifier key vkey: dir/witnessed/<first 8 bytes of
// SHA-256(vkey), hex>.
func StateDirFor(dir, vkey string) string {
	h := sha256.Sum256([]byte(vkey))
	return filepath.Join(dir, "witnessed", hex.EncodeToString(h[:8]))
}

func (s *Submitter) stateDir() string {
	if s.StateDir != "" {
		return s.StateDir
	}
	return StateDirFor(s.Dir, s.Client.Witness.String())
}

// Submit asks the witness to cosign the log's newest checkpoint (its
// checkpoint file), with the consistency proof from the size it last
// cosigned, and keeps and returns the cosigned checkpoint. A checkpoint
// already cosigned is returned as it is.
//
// Errors: ErrRollback and ErrBadProof are the witness refusing what the log
// shows (recorded in the log as checkpoint_refused, once per refusal);
// ErrUnreachable (try later); the witness's other refusals (ErrUnknownLog,
// ErrBadSignature, ErrBadRequest, *ConflictError when another submitter
// moved it meanwhile); audit.ErrNotInLog and I/O errors for a log that does
// not hold its own checkpoint.
func (s *Submitter) Submit(ctx context.Context) ([]byte, error) {
	out, fresh, err := s.submit(ctx)
	if fresh && s.Cosigned != nil {
		s.Cosigned(out)
	}
	return out, err
}

func (s *Submitter) submit(ctx context.Context) (cosigned []byte, fresh bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp, err := s.newestCheckpoint()
	if err != nil {
		return nil, false, err
	}
	held, edge := s.load()
	if held != nil && held.Head == cp.Head {
		return held.Text, false, nil
	}
	var old int64
	if held != nil {
		old = held.Size
	}
	if cp.Size < old {
		// Told anyway, so that the witness keeps it as evidence too.
		s.Client.Cosign(ctx, cp.Text, Proof{OldSize: old})
		return nil, false, s.refuse(ctx, cp, old, "rollback", ErrRollback)
	}
	out, next, err := s.cosign(ctx, cp, edge, old)
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		// The witness cosigned another size than the one kept here (this
		// state was lost or restored, or the witness's was): prove from
		// its size.
		if conflict.Size > cp.Size {
			return nil, false, s.refuse(ctx, cp, conflict.Size, "rollback", ErrRollback)
		}
		old = conflict.Size
		out, next, err = s.cosign(ctx, cp, audit.Edge{}, old)
	}
	if errors.Is(err, ErrBadProof) {
		return nil, false, s.refuse(ctx, cp, old, "fork", err)
	}
	if err != nil {
		return nil, false, err
	}
	if err := s.save(out, next); err != nil {
		return out, true, err
	}
	s.refused = audit.WitnessFacts{}
	if err := os.Remove(filepath.Join(s.stateDir(), RefusedFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out, true, err
	}
	return out, true, nil
}

// newestCheckpoint reads the log's checkpoint file, signed by the log's
// own key.
func (s *Submitter) newestCheckpoint() (audit.Checkpoint, error) {
	vkey, err := audit.ReadVerifierKey(s.Dir)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, audit.CheckpointFile))
	if err != nil {
		return audit.Checkpoint{}, err
	}
	cp, err := audit.ParseCheckpoint(b)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	if cp.VerifierKey != vkey {
		return audit.Checkpoint{}, fmt.Errorf("%w: signed by %s, not the log's key", audit.ErrUntrustedCheckpoint, cp.VerifierKey)
	}
	return cp, nil
}

func (s *Submitter) cosign(ctx context.Context, cp audit.Checkpoint, edge audit.Edge, old int64) ([]byte, audit.Edge, error) {
	proof, next, err := audit.ProveConsistency(s.Dir, edge, old, cp)
	if err != nil {
		return nil, audit.Edge{}, err
	}
	out, err := s.Client.Cosign(ctx, cp.Text, Proof{OldSize: old, Hashes: proof})
	return out, next, err
}

// refuse records the witness's refusal in the log, unless it is the one
// recorded last, and returns err.
func (s *Submitter) refuse(ctx context.Context, cp audit.Checkpoint, witnessSize int64, reason string, err error) error {
	facts := audit.WitnessFacts{Witness: s.Client.Witness.Name(), Size: cp.Size, WitnessSize: witnessSize, Reason: reason}
	// The same refusal at a later size is the same fact: a log that was
	// cut stays cut, and a record per checkpoint would make checkpoints.
	seen := facts
	seen.Size = 0
	if s.refused == (audit.WitnessFacts{}) {
		s.refused = s.loadRefused()
	}
	if s.Log == nil || s.refused == seen {
		return err
	}
	if _, rerr := s.Log.Append(ctx, audit.Event{Type: audit.EventCheckpointRefused, Time: time.Now().UTC(), Witness: &facts}); rerr != nil {
		return errors.Join(err, fmt.Errorf("witness: recording the refusal: %w", rerr))
	}
	s.refused = seen
	if s.Refused != nil {
		s.Refused(cp, facts)
	}
	if rerr := s.saveRefused(seen); rerr != nil {
		return errors.Join(err, fmt.Errorf("witness: keeping the refusal recorded: %w", rerr))
	}
	return err
}

// loadRefused reads the last refusal recorded; none if the file is
// missing or unreadable (the refusal is then recorded again, never lost).
func (s *Submitter) loadRefused() audit.WitnessFacts {
	var f audit.WitnessFacts
	b, err := os.ReadFile(filepath.Join(s.stateDir(), RefusedFile))
	if err != nil || json.Unmarshal(b, &f) != nil {
		return audit.WitnessFacts{}
	}
	return f
}

func (s *Submitter) saveRefused(f audit.WitnessFacts) error {
	dir := s.stateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return audit.WriteFileAtomic(dir, RefusedFile, b)
}

// load reads the cosigned checkpoint and the edge kept; missing or
// unreadable files are no state (the witness's conflict answer then says
// where it is).
func (s *Submitter) load() (*audit.Checkpoint, audit.Edge) {
	dir := s.stateDir()
	b, err := os.ReadFile(filepath.Join(dir, CosignedFile))
	if err != nil {
		return nil, audit.Edge{}
	}
	cp, err := ParseCosigned(b)
	if err != nil {
		return nil, audit.Edge{}
	}
	var edge audit.Edge
	if e, err := os.ReadFile(filepath.Join(dir, EdgeFile)); err == nil {
		edge, _ = audit.ParseEdge(e)
	}
	return &cp, edge
}

// save keeps a cosigned checkpoint and its edge. The edge is written
// first: an edge newer than the checkpoint kept is not used (it is at
// another size), so a crash between the two costs a full read, never a
// wrong proof.
func (s *Submitter) save(cosigned []byte, edge audit.Edge) error {
	dir := s.stateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	text, _ := edge.MarshalText()
	if err := audit.WriteFileAtomic(dir, EdgeFile, text); err != nil {
		return err
	}
	return audit.WriteFileAtomic(dir, CosignedFile, cosigned)
}

// Latest returns the newest checkpoint the witness cosigned, nil if none.
func (s *Submitter) Latest() []byte {
	b, err := os.ReadFile(filepath.Join(s.stateDir(), CosignedFile))
	if err != nil {
		return nil
	}
	return b
}

// DefaultMaxRetry bounds Run's backoff: a witness down for a day is tried
// every quarter of an hour, and at once after each new checkpoint.
const DefaultMaxRetry = 15 * time.Minute

// Run submits once at start (a checkpoint may have waited since the last
// run) and after every checkpoint log signs. While the witness cannot be
// reached it tries again after Retry, doubling the wait up to MaxRetry; a
// new checkpoint tries at once. Nothing is lost meanwhile: the newest
// checkpoint's proof covers every one before it. Each change of outcome
// is logged once (unreachable, reachable again, another error), not each
// attempt. Until ctx ends.
func (s *Submitter) Run(ctx context.Context, log *audit.Log) {
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	cancel := log.SubscribeCheckpoints(func(audit.Checkpoint) {
		select {
		case wake <- struct{}{}:
		default: // one wake-up covers every checkpoint before it
		}
	})
	defer cancel()
	retry := s.Retry
	if retry <= 0 {
		retry = DefaultRetry
	}
	maxRetry := s.MaxRetry
	if maxRetry <= 0 {
		maxRetry = DefaultMaxRetry
	}
	maxRetry = max(maxRetry, retry)
	wait := retry
	var again <-chan time.Time
	var last string
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-again:
		}
		_, err := s.Submit(ctx)
		if ctx.Err() != nil {
			return
		}
		last = s.report(last, err)
		again = nil
		if errors.Is(err, ErrUnreachable) {
			again = time.After(wait)
			wait = min(2*wait, maxRetry)
		} else {
			wait = retry
		}
	}
}

// report logs an outcome of Run's that differs from the last one (its
// kind: every unreachable attempt is one), and returns its kind.
func (s *Submitter) report(last string, err error) string {
	kind := "ok"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return last // a log that has signed no checkpoint yet: nothing to say
	case errors.Is(err, ErrUnreachable):
		kind = "unreachable"
	case err != nil:
		kind = err.Error()
	}
	if kind == last || s.Logger == nil {
		return kind
	}
	witness := s.Client.Witness.Name()
	switch {
	case kind == "unreachable":
		s.Logger.Warn("the team's witness cannot be reached; the audit checkpoints wait and are submitted when it answers", "witness", witness, "err", err)
	case err != nil:
		s.Logger.Warn("the team's witness did not cosign this machine's audit checkpoint", "witness", witness, "err", err)
	case last != "":
		s.Logger.Info("the team's witness cosigns this machine's audit checkpoints again", "witness", witness)
	}
	return kind
}
