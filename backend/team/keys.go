package team

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/yettdev/yett/backend/vault"
)

// SigningKey is a machine's team signing key (Ed25519). It lives sealed in
// the vault and in memory only while the vault is unlocked; it prints as
// REDACTED and has no way out but Sign.
type SigningKey struct {
	priv ed25519.PrivateKey
}

func newSigningKey() (*SigningKey, vault.Secret) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	seed := vault.NewSecret(priv.Seed())
	return &SigningKey{priv: priv}, seed
}

// signingKeyFrom reads a key from the seed the vault keeps.
func signingKeyFrom(seed *vault.Secret) (*SigningKey, error) {
	if seed == nil || seed.Len() != ed25519.SeedSize {
		return nil, errors.New("team: the vault's team signing key is malformed")
	}
	return &SigningKey{priv: ed25519.NewKeyFromSeed(seed.Bytes())}, nil
}

// Public is the key's public half, as the team database keeps it.
func (k *SigningKey) Public() string { return publicKeyText(k.priv.Public().(ed25519.PublicKey)) }

// Wipe zeroes the key.
func (k *SigningKey) Wipe() { clear(k.priv) }

func (k *SigningKey) String() string             { return "REDACTED" }
func (k *SigningKey) GoString() string           { return "REDACTED" }
func (k *SigningKey) Format(f fmt.State, _ rune) { f.Write([]byte("REDACTED")) }
func (k *SigningKey) LogValue() slog.Value       { return slog.StringValue("REDACTED") }

// Signature domains: a signature for one kind of record never verifies as
// another's.
const (
	domainRow        = "row"
	domainDrill      = "drill"
	domainCheckpoint = "checkpoint"
	domainCosign     = "cosignature"
	domainRequest    = "revocation-request"
	domainAnswer     = "revocation-answer"
	domainRefusal    = "witness-refusal"
)

// signed is the message a signature covers: Yett's team context, the
// team, the record's domain and its fields, each length-prefixed so no
// two different records share a message.
func signed(teamID, domain string, fields ...string) []byte {
	var b strings.Builder
	b.WriteString("yett-team-signature-v1\n")
	for _, f := range append([]string{teamID, domain}, fields...) {
		fmt.Fprintf(&b, "%d:%s\n", len(f), f)
	}
	return []byte(b.String())
}

// Sign signs a record of domain in team teamID.
func (k *SigningKey) sign(teamID, domain string, fields ...string) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(k.priv, signed(teamID, domain, fields...)))
}

// verify checks sig by the public key pub (publicKeyText's form).
func verify(pub, sig, teamID, domain string, fields ...string) bool {
	key, err := parsePublicKey(pub)
	if err != nil {
		return false
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(sig)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(key, signed(teamID, domain, fields...), raw)
}

const publicKeyPrefix = "ed25519:"

func publicKeyText(k ed25519.PublicKey) string {
	return publicKeyPrefix + base64.StdEncoding.EncodeToString(k)
}

func parsePublicKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(s, publicKeyPrefix)
	if !ok {
		return nil, errors.New("team: not an ed25519 public key")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("team: not an ed25519 public key")
	}
	return ed25519.PublicKey(raw), nil
}

// Fingerprint is what a person compares to know two keys are one:
// "SHA256:" and the unpadded base64 of the public key's SHA-256, as
// OpenSSH shows keys.
func Fingerprint(publicKey string) string {
	k, err := parsePublicKey(publicKey)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(k)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}
