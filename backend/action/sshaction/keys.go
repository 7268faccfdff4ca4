package sshaction

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	xssh "golang.org/x/crypto/ssh"
)

// Errors of key import and generation. Their texts are safe to show: they
// never quote the key.
var (
	ErrNotAKey          = errors.New("ssh: this is not an SSH private key Yett can read (OpenSSH, PEM or PKCS#8)")
	ErrPassphraseNeeded = errors.New("ssh: the key is protected by a passphrase; enter it to import the key")
	ErrWrongPassphrase  = errors.New("ssh: the passphrase does not open this key")
	ErrUnsupportedKey   = errors.New("ssh: Yett accepts Ed25519, ECDSA (P-256, P-384, P-521) and RSA keys of 2048 bits or more")
	ErrKeyTooLarge      = errors.New("ssh: the key file is larger than any SSH private key")
	ErrKDFTooSlow       = errors.New("ssh: the key's passphrase uses more bcrypt rounds than Yett accepts (at most 4096)")
)

// Bounds on what an import reads.
const (
	maxKeyFile   = 64 << 10
	maxBcrypt    = 4096
	minRSABits   = 2048
	maxRSABits   = 16384
	commentLimit = 120
)

// KeyPair is a client key as Yett holds it. PEM is the private key in the
// OpenSSH format, unencrypted, for the caller to seal in the vault and wipe:
// it is the only field that is secret.
type KeyPair struct {
	PEM []byte
	// Public is the authorized_keys line ("ssh-ed25519 AAAA... comment"),
	// ready to copy to the host.
	Public      string
	Fingerprint string // "SHA256:..."
	Type        string // "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"
}

// Wipe zeroes the private key.
func (k *KeyPair) Wipe() {
	clear(k.PEM)
	k.PEM = nil
}

// GenerateEd25519 makes a new Ed25519 key; comment ends the public line.
func GenerateEd25519(comment string) (*KeyPair, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	defer clear(priv)
	return keyPair(priv, comment)
}

// ImportPrivateKey reads a private key a person pasted or picked: the
// OpenSSH format (passphrase-protected or not), PEM (PKCS#1, SEC1, legacy
// encrypted PEM) or PKCS#8. The passphrase is used once, to open the key;
// Yett keeps the opened key (sealed by the caller) and never the passphrase.
//
// Errors: ErrNotAKey, ErrPassphraseNeeded, ErrWrongPassphrase,
// ErrUnsupportedKey, ErrKeyTooLarge, ErrKDFTooSlow.
func ImportPrivateKey(data, passphrase []byte, comment string) (*KeyPair, error) {
	if len(data) > maxKeyFile {
		return nil, ErrKeyTooLarge
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, ErrNotAKey
	}
	if block.Type == "OPENSSH PRIVATE KEY" {
		if err := checkOpenSSHKDF(block.Bytes); err != nil {
			return nil, err
		}
	}
	raw, err := xssh.ParseRawPrivateKey(data)
	var missing *xssh.PassphraseMissingError
	if errors.As(err, &missing) {
		if len(passphrase) == 0 {
			return nil, ErrPassphraseNeeded
		}
		raw, err = xssh.ParseRawPrivateKeyWithPassphrase(data, passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, ErrWrongPassphrase
		}
	}
	if err != nil {
		return nil, importError(err)
	}
	defer wipeRaw(raw)
	return keyPair(raw, comment)
}

func importError(err error) error {
	if m := err.Error(); strings.Contains(m, "unsupported key type") || strings.Contains(m, "unhandled key type") ||
		strings.Contains(m, "DSA") {
		return ErrUnsupportedKey
	}
	return ErrNotAKey
}

// checkOpenSSHKDF reads the header of an openssh-key-v1 blob and refuses
// a bcrypt work factor that would keep the importer busy for minutes: the
// rounds are part of the file, and the file is input.
func checkOpenSSHKDF(b []byte) error {
	const magic = "openssh-key-v1\x00"
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return ErrNotAKey
	}
	b = b[len(magic):]
	str := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return nil, false
		}
		s := b[4 : 4+n]
		b = b[4+n:]
		return s, true
	}
	_, ok1 := str() // cipher name
	kdf, ok2 := str()
	opts, ok3 := str()
	if !ok1 || !ok2 || !ok3 {
		return ErrNotAKey
	}
	if string(kdf) != "bcrypt" {
		return nil
	}
	b = opts
	if _, ok := str(); !ok || len(b) < 4 { // salt, then rounds
		return ErrNotAKey
	}
	if binary.BigEndian.Uint32(b) > maxBcrypt {
		return ErrKDFTooSlow
	}
	return nil
}

// keyPair checks the key's type and strength and marshals it.
func keyPair(raw any, comment string) (*KeyPair, error) {
	key, err := normalise(raw)
	if err != nil {
		return nil, err
	}
	signer, err := xssh.NewSignerFromKey(key)
	if err != nil {
		return nil, ErrUnsupportedKey
	}
	comment = cleanComment(comment)
	block, err := xssh.MarshalPrivateKey(key, comment)
	if err != nil {
		return nil, ErrUnsupportedKey
	}
	pub := signer.PublicKey()
	line := strings.TrimSpace(string(xssh.MarshalAuthorizedKey(pub)))
	if comment != "" {
		line += " " + comment
	}
	pemBytes := pem.EncodeToMemory(block)
	clear(block.Bytes)
	return &KeyPair{PEM: pemBytes, Public: line, Fingerprint: xssh.FingerprintSHA256(pub), Type: pub.Type()}, nil
}

// normalise returns the key in the form MarshalPrivateKey takes, after
// checking it is a type and size Yett accepts.
func normalise(raw any) (any, error) {
	switch k := raw.(type) {
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, ErrUnsupportedKey
		}
		return k, nil
	case *ed25519.PrivateKey:
		if k == nil || len(*k) != ed25519.PrivateKeySize {
			return nil, ErrUnsupportedKey
		}
		return *k, nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
			return k, nil
		}
	case *rsa.PrivateKey:
		if bits := k.N.BitLen(); bits >= minRSABits && bits <= maxRSABits {
			return k, nil
		}
	}
	return nil, ErrUnsupportedKey
}

// wipeRaw clears what can be cleared of a parsed key. Ed25519 keys are byte
// slices; the big integers of RSA and ECDSA keys cannot be cleared reliably
// (best effort, see docs/threat-model.md).
func wipeRaw(raw any) {
	switch k := raw.(type) {
	case ed25519.PrivateKey:
		clear(k)
	case *ed25519.PrivateKey:
		if k != nil {
			clear(*k)
		}
	}
}

// cleanComment keeps a comment printable and short: it is shown and goes
// into the host's authorized_keys.
func cleanComment(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= commentLimit {
			break
		}
		switch {
		case r == ' ' || r == '-' || r == '_' || r == '.' || r == '@' || r == ':',
			r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.TrimSpace(b.String())
}

// PublicOf returns the public line and fingerprint of a key in the form
// KeyPair.PEM holds. The caller wipes pemBytes.
func PublicOf(pemBytes []byte) (public, fingerprint string, err error) {
	raw, err := xssh.ParseRawPrivateKey(pemBytes)
	if err != nil {
		return "", "", ErrNotAKey
	}
	defer wipeRaw(raw)
	key, err := normalise(raw)
	if err != nil {
		return "", "", err
	}
	s, err := xssh.NewSignerFromKey(key)
	if err != nil {
		return "", "", ErrUnsupportedKey
	}
	return strings.TrimSpace(string(xssh.MarshalAuthorizedKey(s.PublicKey()))), xssh.FingerprintSHA256(s.PublicKey()), nil
}

// signerFrom parses a lent key into a signer. wipe clears what of the
// parsed key can be cleared once the signer's work is done.
func signerFrom(pemBytes []byte) (xssh.Signer, func(), error) {
	raw, err := xssh.ParseRawPrivateKey(pemBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the host's key does not parse", ErrNoKey)
	}
	key, err := normalise(raw)
	if err != nil {
		wipeRaw(raw)
		return nil, nil, fmt.Errorf("%w: %w", ErrNoKey, err)
	}
	s, err := xssh.NewSignerFromKey(key)
	if err != nil {
		wipeRaw(raw)
		return nil, nil, fmt.Errorf("%w: %w", ErrNoKey, ErrUnsupportedKey)
	}
	return s, func() { wipeRaw(raw) }, nil
}
