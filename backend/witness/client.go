package witness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
)

// Client asks one witness to cosign checkpoints (tlog-witness
// add-checkpoint) and checks the cosignature it answers with.
type Client struct {
	// URL is the witness's submission prefix ("http://127.0.0.1:7380").
	URL string
	// Witness is the witness's verifier key; cosignatures by any other
	// key in an answer are ignored, as tlog-witness says.
	Witness *Verifier
	// HTTP is the client to use; nil means one with a 30 s timeout.
	HTTP *http.Client
}

// ErrUnreachable wraps a failure to get any answer from the witness (the
// network, the witness down, an answer cut short): the request may be
// tried again later, nothing was learnt about the log.
var ErrUnreachable = errors.New("witness: unreachable")

// ErrBadCosignature is returned when the witness answered 200 without a
// valid cosignature by its key.
var ErrBadCosignature = errors.New("witness: the answer carries no valid cosignature by the witness's key")

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// maxAnswer bounds what is read of an answer: a few signature lines.
const maxAnswer = 16 << 10

// Cosign submits checkpoint (a signed note) with the consistency proof from
// the size the witness last cosigned, and returns the checkpoint with the
// witness's cosignature added to its signatures, verified.
//
// Errors: *ConflictError (the witness cosigned another size: prove from
// that one), ErrBadProof (the checkpoint does not extend what the witness
// cosigned: the log was rewritten, or the proof is wrong), ErrUnknownLog,
// ErrBadSignature, ErrBadRequest (the witness's other refusals),
// ErrBadCosignature, and ErrUnreachable wrapping transport failures.
func (c *Client) Cosign(ctx context.Context, checkpoint []byte, p Proof) ([]byte, error) {
	body := AddCheckpoint{Proof: p, Checkpoint: checkpoint}.Marshal()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.URL, "/")+"/add-checkpoint", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the answer: %v", ErrUnreachable, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return c.addCosignature(checkpoint, answer)
	case http.StatusConflict:
		size, err := parseSize(strings.TrimSuffix(string(answer), "\n"))
		if err != nil || !strings.HasSuffix(string(answer), "\n") {
			return nil, fmt.Errorf("%w: a conflict answer without a size", ErrUnreachable)
		}
		return nil, &ConflictError{Size: size}
	case http.StatusUnprocessableEntity:
		return nil, ErrBadProof
	case http.StatusNotFound:
		return nil, ErrUnknownLog
	case http.StatusForbidden:
		return nil, ErrBadSignature
	case http.StatusBadRequest:
		return nil, ErrBadRequest
	}
	return nil, fmt.Errorf("%w: HTTP status %d", ErrUnreachable, resp.StatusCode)
}

// addCosignature checks the witness's answer (signature lines) against the
// checkpoint and returns the checkpoint with the witness's cosignature
// appended. Lines by other keys are dropped.
func (c *Client) addCosignature(checkpoint, answer []byte) ([]byte, error) {
	text, _, ok := bytes.Cut(checkpoint, []byte("\n\n"))
	if !ok {
		return nil, ErrBadRequest
	}
	// tlog-witness: concatenate the answer to the checkpoint and open it
	// with the witness's key.
	n, err := note.Open(append(append([]byte(nil), checkpoint...), answer...), note.VerifierList(c.Witness))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCosignature, err)
	}
	if n.Text != string(text)+"\n" || len(n.Sigs) != 1 {
		return nil, ErrBadCosignature
	}
	if _, err := torchwood.CosignatureTimestamp(n.Sigs[0]); err != nil {
		return nil, ErrBadCosignature
	}
	out := append([]byte(nil), checkpoint...)
	return fmt.Appendf(out, "— %s %s\n", n.Sigs[0].Name, n.Sigs[0].Base64), nil
}
