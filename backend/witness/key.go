package witness

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
)

// algCosignatureV1 is the signature type byte of an Ed25519 cosignature/v1
// key (C2SP tlog-cosignature): it enters the key ID and the vkey encoding.
const algCosignatureV1 = 0x04

// SeedSize is the size of a witness key's private seed.
const SeedSize = ed25519.SeedSize

// Key is a witness's signing key: a name (a schema-less URL that names the
// witness, as tlog-cosignature asks) and an Ed25519 private key. It has no
// String, and prints and logs as REDACTED, so the private half cannot reach
// a log line or an error by accident.
type Key struct {
	name   string
	priv   ed25519.PrivateKey
	signer *torchwood.CosignatureSigner
}

// ErrBadKey is returned for a witness name, seed or verifier key that does
// not parse. Its text never quotes the input.
var ErrBadKey = errors.New("witness: malformed key")

// NewKey makes a fresh witness key with the given name.
func NewKey(name string) (*Key, error) {
	seed := make([]byte, SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	defer clear(seed)
	return KeyFromSeed(name, seed)
}

// KeyFromSeed rebuilds a key from its name and the seed Seed returned (as
// the vault keeps it). The caller may wipe seed afterwards.
func KeyFromSeed(name string, seed []byte) (*Key, error) {
	if !validName(name) || len(seed) != SeedSize {
		return nil, ErrBadKey
	}
	priv := ed25519.NewKeyFromSeed(seed)
	// torchwood's signer writes the C2SP cosignature/v1 message (header,
	// timestamp line, checkpoint) and the timestamped signature, and checks
	// that what it signs is a checkpoint in its one canonical form.
	s, err := torchwood.NewCosignatureSigner(name, priv)
	if err != nil {
		return nil, ErrBadKey
	}
	return &Key{name: name, priv: priv, signer: s}, nil
}

// Name is the witness's name, the key name of its cosignatures.
func (k *Key) Name() string { return k.name }

// Seed returns a copy of the private seed, for sealing in the vault. The
// caller wipes it.
func (k *Key) Seed() []byte { return append([]byte(nil), k.priv.Seed()...) }

// VerifierKey is the public key in the signed-note vkey encoding with
// signature type 0x04, what the members of a team configure to trust the
// witness.
func (k *Key) VerifierKey() string { return k.signer.Verifier().String() }

func (*Key) Format(f fmt.State, _ rune) { f.Write([]byte("REDACTED")) }
func (*Key) LogValue() slog.Value       { return slog.StringValue("REDACTED") }

// validName is the signed-note rule for key names: non-empty UTF-8 without
// spaces or '+'.
func validName(name string) bool {
	return name != "" && len(name) <= 256 && utf8.ValidString(name) &&
		strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// Verifier checks cosignature/v1 signatures of one witness. It is a
// note.Verifier: note.Open with it accepts a checkpoint that the witness
// cosigned, and Timestamp reads when it did.
type Verifier struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
	vkey string
}

var _ note.Verifier = (*Verifier)(nil)

// NewVerifier parses a witness's vkey (name+hash+base64(0x04 || public
// key)). x/mod's note.NewVerifier knows only type 0x01, and torchwood
// v0.6.1 builds a cosignature verifier only from the private key, so this
// is the one parser of its own here.
func NewVerifier(vkey string) (*Verifier, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	hash16, key64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 || !validName(name) || len(hash16) != 8 || strings.ToLower(hash16) != hash16 {
		return nil, ErrBadKey
	}
	hash, err := strconv.ParseUint(hash16, 16, 32)
	if err != nil {
		return nil, ErrBadKey
	}
	key, err := base64.StdEncoding.Strict().DecodeString(key64)
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != algCosignatureV1 {
		return nil, ErrBadKey
	}
	if uint32(hash) != keyHash(name, key) {
		return nil, ErrBadKey
	}
	return &Verifier{name: name, hash: uint32(hash), pub: ed25519.PublicKey(key[1:]), vkey: vkey}, nil
}

// keyHash is the signed-note key ID: SHA-256(name || "\n" || type || key)[:4].
func keyHash(name string, typedKey []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write(typedKey)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

func (v *Verifier) Name() string    { return v.name }
func (v *Verifier) KeyHash() uint32 { return v.hash }
func (v *Verifier) String() string  { return v.vkey }

// Verify checks a timestamped signature (8-byte big-endian time, then the
// Ed25519 signature) over "cosignature/v1\ntime T\n" and the checkpoint.
func (v *Verifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	if t > 1<<63-1 {
		return false
	}
	m := make([]byte, 0, 40+len(msg))
	m = fmt.Appendf(m, "cosignature/v1\ntime %d\n", t)
	m = append(m, msg...)
	return ed25519.Verify(v.pub, m, sig[8:])
}
