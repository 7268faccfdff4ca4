// Package ids makes the random identifiers Yett gives its records: a
// prefix that says what the id names ("az-" an authorization, "fl-" a
// connection flow, "cs-" a session…) and hex of crypto/rand bytes.
//
// An id names a record; it is never a secret and never a capability. What
// an id lets someone do is decided by the code that holds the record.
package ids

import (
	"crypto/rand"
	"encoding/hex"
)

// DefaultBytes is the randomness of New: 96 bits, so ids made at any rate
// Yett could sustain never collide.
const DefaultBytes = 12

// New returns prefix followed by DefaultBytes random bytes in hex.
func New(prefix string) string { return Sized(prefix, DefaultBytes) }

// Sized returns prefix followed by n random bytes in hex.
func Sized(prefix string, n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand's documented contract)
	return prefix + hex.EncodeToString(b)
}
