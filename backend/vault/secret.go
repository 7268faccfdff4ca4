package vault

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
)

const redacted = "REDACTED"

// Passphrase is the person's vault passphrase. Create and Unlock zero it
// before they return, so callers hand over a slice they no longer need. It
// has no String method on purpose: %s prints bytes, never a readable word.
type Passphrase []byte

// Format prints REDACTED for every verb, so the passphrase cannot be
// formatted into a log line or an error by accident.
func (Passphrase) Format(f fmt.State, _ rune) { f.Write([]byte(redacted)) }

// LogValue redacts the passphrase in structured logs.
func (Passphrase) LogValue() slog.Value { return slog.StringValue(redacted) }

// Secret is a credential's secret value. It is write-only as far as the
// person is concerned: it is never listed, shown or marshalled. Printing,
// logging or JSON-encoding it yields REDACTED. A Secret holds a slice, so
// == does not compile; use Equal.
type Secret struct {
	b []byte
}

// NewSecret copies b into a Secret; the caller may wipe b afterwards.
func NewSecret(b []byte) Secret { return Secret{b: append([]byte(nil), b...)} }

// Bytes returns the secret's bytes for the one place that injects them
// (the gateway). Do not keep, log or copy the slice; call Wipe when done.
func (s *Secret) Bytes() []byte { return s.b }

// Len reports the length of the secret.
func (s Secret) Len() int { return len(s.b) }

// Equal compares in constant time.
func (s Secret) Equal(o Secret) bool { return subtle.ConstantTimeCompare(s.b, o.b) == 1 }

// Wipe zeroes the secret's bytes.
func (s *Secret) Wipe() {
	clear(s.b)
	s.b = nil
}

func (Secret) String() string               { return redacted }
func (Secret) GoString() string             { return redacted }
func (Secret) Format(f fmt.State, _ rune)   { f.Write([]byte(redacted)) }
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
func (Secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
