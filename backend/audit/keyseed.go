package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
)

// ed25519PublicFromNoteKey derives the public key from the base64 key field of
// a note signing key (algorithm byte 1 followed by the 32-byte seed).
func ed25519PublicFromNoteKey(field string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(field)
	if err != nil || len(b) != 1+ed25519.SeedSize || b[0] != 1 {
		return nil, errors.New("audit: signing key file is malformed")
	}
	priv := ed25519.NewKeyFromSeed(b[1:])
	clear(b)
	return priv.Public().(ed25519.PublicKey), nil
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
