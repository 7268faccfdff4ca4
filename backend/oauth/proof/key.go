package proof

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// ErrInvalidKey means bytes given to ParseKey are not a PKCS#8 ECDSA P-256
// private key. The error never describes the bytes.
var ErrInvalidKey = errors.New("proof: not a PKCS#8 ECDSA P-256 private key")

// Key is an ECDSA P-256 signing key. Its zero value is not usable; make one
// with GenerateKey or ParseKey. A Key is safe for concurrent use.
//
// Key has no String and no exported fields; Format, LogValue and
// MarshalJSON show only its thumbprint, so a Key passed to a logger or an
// error by mistake does not leak.
type Key struct {
	_      [0]func() // not comparable: compare thumbprints instead
	priv   *ecdsa.PrivateKey
	pkcs8  []byte
	x, y   string // base64url, 32 bytes each before encoding
	thumb  string
	jwk    []byte // public JWK, as returned by PublicJWK
	header map[string]any
}

// GenerateKey returns a new random P-256 key.
func GenerateKey() (*Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("proof: generate key: %w", err)
	}
	return newKey(priv)
}

// ParseKey reads a PKCS#8 ("PRIVATE KEY") DER encoding of a P-256 key, as
// produced by Key.PKCS8. It returns ErrInvalidKey for anything else.
func ParseKey(pkcs8 []byte) (*Key, error) {
	// The x509 parser ignores bytes after the DER structure; a key with a
	// tail is not one this package wrote, so it is refused.
	var outer asn1.RawValue
	if rest, err := asn1.Unmarshal(pkcs8, &outer); err != nil || len(rest) != 0 {
		return nil, ErrInvalidKey
	}
	parsed, err := x509.ParsePKCS8PrivateKey(pkcs8)
	if err != nil {
		// The parser's message is not needed and is not passed on.
		return nil, ErrInvalidKey
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, ErrInvalidKey
	}
	return newKey(priv)
}

func newKey(priv *ecdsa.PrivateKey) (*Key, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, ErrInvalidKey
	}
	point, err := priv.PublicKey.Bytes() // 0x04 || X || Y, fixed length
	if err != nil || len(point) != 65 {
		return nil, ErrInvalidKey
	}
	k := &Key{
		priv:  priv,
		pkcs8: der,
		x:     b64(point[1:33]),
		y:     b64(point[33:65]),
	}
	k.thumb = ecThumbprint(k.x, k.y)
	k.jwk = fmt.Appendf(nil, `{"kty":"EC","crv":"P-256","x":%q,"y":%q,"kid":%q,"alg":"ES256","use":"sig"}`,
		k.x, k.y, k.thumb)
	// The DPoP jwk header carries only the members the thumbprint covers.
	k.header = map[string]any{"kty": "EC", "crv": "P-256", "x": k.x, "y": k.y}
	return k, nil
}

// PKCS8 returns the private key as PKCS#8 DER, for the caller to seal in the
// vault. It is a fresh copy on every call.
func (k *Key) PKCS8() []byte {
	return append([]byte(nil), k.pkcs8...)
}

// PublicJWK returns the public key as a JWK (RFC 7517, RFC 7518 §6.2) with
// kid, alg ES256 and use sig:
//
//	{"kty":"EC","crv":"P-256","x":"...","y":"...","kid":"...","alg":"ES256","use":"sig"}
func (k *Key) PublicJWK() json.RawMessage {
	return append(json.RawMessage(nil), k.jwk...)
}

// JWKS returns a JWK Set holding PublicJWK, the form an authorization server
// reads from a client's jwks or jwks_uri.
func (k *Key) JWKS() json.RawMessage {
	out := append(json.RawMessage(`{"keys":[`), k.jwk...)
	return append(out, "]}"...)
}

// Thumbprint returns the RFC 7638 JWK thumbprint of the public key:
// base64url (no padding) of SHA-256 over {"crv","kty","x","y"} in that
// order without whitespace. It is the jkt a DPoP-bound token names.
func (k *Key) Thumbprint() string { return k.thumb }

// KeyID returns the kid used in PublicJWK and in client assertions; it is
// the Thumbprint.
func (k *Key) KeyID() string { return k.thumb }

// Format prints a redacted form for every fmt verb.
func (k *Key) Format(f fmt.State, _ rune) {
	fmt.Fprint(f, k.redacted())
}

// LogValue gives slog the redacted form.
func (k *Key) LogValue() slog.Value { return slog.StringValue(k.redacted()) }

// MarshalJSON gives encoding/json the redacted form, as a string.
func (k *Key) MarshalJSON() ([]byte, error) { return json.Marshal(k.redacted()) }

func (k *Key) redacted() string {
	if k == nil || k.priv == nil {
		return "proof.Key(nil)"
	}
	return "proof.Key(REDACTED, kid " + k.thumb + ")"
}

// ecThumbprint hashes the RFC 7638 canonical form of an EC public JWK.
func ecThumbprint(x, y string) string {
	canonical := `{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`
	return thumbprintOf([]byte(canonical))
}

// thumbprintOf is the RFC 7638 §3 hash step over a canonical JWK.
func thumbprintOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return b64(sum[:])
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
