package audit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"filippo.io/age"
)

// sealed is the plaintext inside each event record. The log ID and index are
// repeated inside the encryption so a reader holding the identity can tell a
// ciphertext moved from another position or log even if its framing was
// rewritten to fit.
type sealed struct {
	V     int    `json:"v"`
	Log   string `json:"log"`
	Index int64  `json:"index"`
	Event Event  `json:"event"`
}

// seal encrypts e for recipient. Only the recipient's identity can open it;
// the writer cannot.
func seal(recipient age.Recipient, id LogID, index int64, e *Event) ([]byte, error) {
	pt, err := json.Marshal(sealed{V: 1, Log: hex.EncodeToString(id[:]), Index: index, Event: *e})
	if err != nil {
		return nil, fmt.Errorf("audit: encode event: %w", err)
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, recipient)
	if err != nil {
		return nil, fmt.Errorf("audit: encrypt: %w", err)
	}
	if _, err := w.Write(pt); err != nil {
		return nil, fmt.Errorf("audit: encrypt: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("audit: encrypt: %w", err)
	}
	clear(pt)
	return buf.Bytes(), nil
}

// ErrMisplaced is returned when a decrypted event names another log or index
// than the record holding it.
var ErrMisplaced = errors.New("audit: sealed event does not belong at this position")

// open decrypts an event record with identity and checks its position.
func open(rec Record, identity age.Identity) (Event, error) {
	r, err := age.Decrypt(bytes.NewReader(rec.Payload), identity)
	if err != nil {
		return Event{}, fmt.Errorf("audit: decrypt entry %d: %w", rec.Index, err)
	}
	pt, err := io.ReadAll(io.LimitReader(r, MaxBodySize))
	if err != nil {
		return Event{}, fmt.Errorf("audit: decrypt entry %d: %w", rec.Index, err)
	}
	var s sealed
	if err := json.Unmarshal(pt, &s); err != nil { // whole plaintext, no trailing bytes
		return Event{}, fmt.Errorf("audit: decode entry %d: %w", rec.Index, err)
	}
	if s.V != 1 || s.Log != hex.EncodeToString(rec.LogID[:]) || s.Index != rec.Index {
		return Event{}, fmt.Errorf("%w: entry %d", ErrMisplaced, rec.Index)
	}
	return s.Event, nil
}
