package witness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/yettdev/yett/backend/audit"
)

// Logs names the logs a witness cosigns and the keys that sign them.
type Logs interface {
	// Verifiers returns the keys trusted for origin's checkpoints, or
	// ErrUnknownLog.
	Verifiers(ctx context.Context, origin string) (note.Verifiers, error)
}

// KnownLogs is a fixed set of logs, each given by its verifier key.
type KnownLogs map[string][]note.Verifier

// NewKnownLogs trusts each verifier key for the origin it signs: a Yett
// audit key ("yett-audit-<log ID>") for "yett.dev/audit/<log ID>", any other
// key for the origin that is its name (the tlog-checkpoint convention).
func NewKnownLogs(vkeys ...string) (KnownLogs, error) {
	logs := KnownLogs{}
	for _, vkey := range vkeys {
		v, err := note.NewVerifier(vkey)
		if err != nil {
			return nil, fmt.Errorf("witness: log key %q: %w", vkey, err)
		}
		origin := v.Name()
		if strings.HasPrefix(origin, "yett-audit-") {
			if origin, err = audit.Origin(vkey); err != nil {
				return nil, fmt.Errorf("witness: log key %q: %w", vkey, err)
			}
		}
		logs[origin] = append(logs[origin], v)
	}
	return logs, nil
}

func (k KnownLogs) Verifiers(_ context.Context, origin string) (note.Verifiers, error) {
	vs, ok := k[origin]
	if !ok {
		return nil, ErrUnknownLog
	}
	return note.VerifierList(vs...), nil
}

// Witness is a tlog-witness: it cosigns a log's checkpoint only when it is
// consistent with the newest one it cosigned for that log, and never goes
// back. Safe for concurrent use; the Store keeps it honest across requests
// and restarts.
type Witness struct {
	key   *Key
	logs  Logs
	store Store
	log   *slog.Logger
}

// New returns a witness that signs with key, trusts logs and keeps its
// state in store. logger may be nil.
func New(key *Key, logs Logs, store Store, logger *slog.Logger) *Witness {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Witness{key: key, logs: logs, store: store, log: logger}
}

// emptyRoot is the RFC 6962 hash of the empty tree.
var emptyRoot = tlog.Hash(sha256.Sum256(nil))

// AddCheckpoint checks r as tlog-witness says and returns the witness's
// cosignature lines for its checkpoint. Errors: ErrUnknownLog,
// ErrBadSignature, ErrBadRequest, *ConflictError, ErrBadProof, and the
// store's own.
func (w *Witness) AddCheckpoint(ctx context.Context, r AddCheckpoint) ([]byte, error) {
	origin, _, _ := bytes.Cut(r.Checkpoint, []byte("\n"))
	vs, err := w.logs.Verifiers(ctx, string(origin))
	if err != nil {
		return nil, err
	}
	n, err := note.Open(r.Checkpoint, vs)
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified) || errors.As(err, &invalid):
		return nil, ErrBadSignature
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	c, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil || c.String() != n.Text {
		return nil, fmt.Errorf("%w: not a checkpoint in its canonical form", ErrBadRequest)
	}
	st, err := w.store.Latest(ctx, c.Origin)
	if err != nil {
		return nil, err
	}
	verified := withSignatures(n.Text, n.Sigs)
	if c.N < st.Tree.N {
		w.refuse(ctx, Refusal{Origin: c.Origin, Witnessed: st.Tree, Tree: c.Tree, OldSize: r.OldSize, Reason: RefusedRollback, Checkpoint: verified})
	}
	if r.OldSize > c.N {
		return nil, fmt.Errorf("%w: old size %d above the checkpoint's %d", ErrBadRequest, r.OldSize, c.N)
	}
	if r.OldSize != st.Tree.N {
		return nil, &ConflictError{Size: st.Tree.N}
	}
	if err := checkExtends(st.Tree, c.Tree, r.Proof); err != nil {
		w.refuse(ctx, Refusal{Origin: c.Origin, Witnessed: st.Tree, Tree: c.Tree, OldSize: r.OldSize, Reason: RefusedFork, Checkpoint: verified})
		return nil, err
	}
	cosig, err := w.cosign(n.Text)
	if err != nil {
		return nil, err
	}
	// Signed before it is stored, so the stored checkpoint carries the
	// cosignature; a signature made for a request that then loses the
	// swap is never sent.
	if err := w.store.Advance(ctx, c.Origin, st.Tree, State{Tree: c.Tree, Checkpoint: append(verified, cosig...)}); err != nil {
		return nil, err
	}
	return cosig, nil
}

// checkExtends checks that next extends old (whose size the request's
// proof starts from), as tlog-witness orders the checks.
func checkExtends(old, next tlog.Tree, p Proof) error {
	switch {
	case next.N == 0 && next.Hash != emptyRoot:
		return fmt.Errorf("%w: an empty tree with another root", ErrBadProof)
	case p.OldSize == 0 && len(p.Hashes) != 0:
		return fmt.Errorf("%w: a proof from the empty tree", ErrBadProof)
	case p.OldSize == 0:
		return nil
	case p.OldSize == next.N && (old.Hash != next.Hash || len(p.Hashes) != 0):
		return fmt.Errorf("%w: size %d cosigned with another root", ErrBadProof, next.N)
	case p.OldSize == next.N:
		return nil
	}
	if err := tlog.CheckTree(p.Hashes, next.N, next.Hash, old.N, old.Hash); err != nil {
		return fmt.Errorf("%w: from size %d to %d", ErrBadProof, old.N, next.N)
	}
	return nil
}

// cosign returns the witness's cosignature line for the checkpoint text.
func (w *Witness) cosign(text string) ([]byte, error) {
	signed, err := note.Sign(&note.Note{Text: text}, w.key.signer)
	if err != nil {
		return nil, fmt.Errorf("witness: cosign: %w", err)
	}
	return signed[len(text)+1:], nil // after the text and the empty line
}

// withSignatures encodes a note from its text and the signatures given.
func withSignatures(text string, sigs []note.Signature) []byte {
	var b bytes.Buffer
	b.WriteString(text)
	b.WriteByte('\n')
	for _, s := range sigs {
		fmt.Fprintf(&b, "— %s %s\n", s.Name, s.Base64)
	}
	return b.Bytes()
}

// refuse keeps a refusal; failing to keep it does not change the answer.
func (w *Witness) refuse(ctx context.Context, r Refusal) {
	r.At = time.Now()
	w.log.Warn("witness: refused a checkpoint", "origin", r.Origin, "reason", r.Reason,
		"witnessed_size", r.Witnessed.N, "size", r.Tree.N, "old_size", r.OldSize)
	if err := w.store.Refuse(ctx, r); err != nil {
		w.log.Error("witness: keeping a refusal", "origin", r.Origin, "err", err)
	}
}

// ServeHTTP serves POST /add-checkpoint.
func (w *Witness) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/add-checkpoint" {
		http.NotFound(rw, req)
		return
	}
	if req.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, req.Body, MaxRequestSize))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(rw, "request too large", http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(rw, "cannot read the request", http.StatusBadRequest)
		return
	}
	r, err := ParseAddCheckpoint(body)
	if err == nil {
		var cosig []byte
		if cosig, err = w.AddCheckpoint(req.Context(), r); err == nil {
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
			rw.Write(cosig)
			return
		}
	}
	writeError(rw, w.log, err)
}

// writeError answers with the status tlog-witness gives each error. Texts
// are the package's own: none quotes the request.
func writeError(rw http.ResponseWriter, logger *slog.Logger, err error) {
	var conflict *ConflictError
	switch {
	case errors.As(err, &conflict):
		rw.Header().Set("Content-Type", "text/x.tlog.size")
		rw.WriteHeader(http.StatusConflict)
		fmt.Fprintf(rw, "%d\n", conflict.Size)
	case errors.Is(err, ErrUnknownLog):
		http.Error(rw, ErrUnknownLog.Error(), http.StatusNotFound)
	case errors.Is(err, ErrBadSignature):
		http.Error(rw, ErrBadSignature.Error(), http.StatusForbidden)
	case errors.Is(err, ErrBadRequest):
		http.Error(rw, ErrBadRequest.Error(), http.StatusBadRequest)
	case errors.Is(err, ErrBadProof):
		http.Error(rw, ErrBadProof.Error(), http.StatusUnprocessableEntity)
	default:
		logger.Error("witness: add-checkpoint", "err", err)
		http.Error(rw, "internal error", http.StatusInternalServerError)
	}
}
