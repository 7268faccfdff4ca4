package audit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Names of the files in a log directory.
const (
	LogFile         = "log"
	CheckpointFile  = "checkpoint"
	VerifierKeyFile = "verifier.key"
	SigningKeyFile  = "signing.key"
)

// ErrNoSigningKey is returned by Open when a log exists but its signing key
// does not. Open never makes a new key for an existing log: checkpoints under
// a new key would be indistinguishable from a rewrite.
var ErrNoSigningKey = errors.New("audit: signing key missing for existing log")

// signingKey is the checkpoint signer of one log. It has no String method:
// the private key must never reach a log line or an error.
type signingKey struct {
	signer note.Signer
	vkey   string
	id     LogID
}

// newSigningKey makes a fresh log ID and key pair and stores both key files.
// The private key goes to its own 0600 file, never into the log.
func newSigningKey(dir string) (*signingKey, error) {
	var id LogID
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, keyName(id))
	if err != nil {
		return nil, fmt.Errorf("audit: generate signing key: %w", err)
	}
	if err := writeFileAtomic(dir, VerifierKeyFile, []byte(vkey+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(dir, SigningKeyFile, []byte(skey+"\n"), 0o600); err != nil {
		return nil, err
	}
	return parseSigningKey(skey)
}

// loadSigningKey reads the signing key file of dir.
func loadSigningKey(dir string) (*signingKey, error) {
	b, err := os.ReadFile(filepath.Join(dir, SigningKeyFile))
	if err != nil {
		return nil, err
	}
	return parseSigningKey(strings.TrimSpace(string(b)))
}

func parseSigningKey(skey string) (*signingKey, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		// Do not wrap err: its text could quote the key.
		return nil, errors.New("audit: signing key file is malformed")
	}
	id, err := logIDFromKeyName(s.Name())
	if err != nil {
		return nil, err
	}
	vkey, err := verifierKeyFor(skey)
	if err != nil {
		return nil, err
	}
	return &signingKey{signer: s, vkey: vkey, id: id}, nil
}

// verifierKeyFor derives the public verifier key from a signing key string
// (PRIVATE+KEY+name+hash+base64(alg||seed)).
func verifierKeyFor(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 {
		return "", errors.New("audit: signing key file is malformed")
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		return "", errors.New("audit: signing key file is malformed")
	}
	pub, err := ed25519PublicFromNoteKey(parts[4])
	if err != nil {
		return "", err
	}
	return note.NewEd25519VerifierKey(s.Name(), pub)
}

func logIDFromKeyName(name string) (LogID, error) {
	var id LogID
	h, ok := strings.CutPrefix(name, "yett-audit-")
	if !ok || len(h) != 2*logIDSize {
		return id, errors.New("audit: signing key is not a Yett audit key")
	}
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return id, errors.New("audit: signing key is not a Yett audit key")
	}
	return id, nil
}

// ReadVerifierKey reads the public verifier key stored next to a log.
func ReadVerifierKey(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, VerifierKeyFile))
	if err != nil {
		return "", err
	}
	vkey := strings.TrimSpace(string(b))
	if _, err := note.NewVerifier(vkey); err != nil {
		return "", fmt.Errorf("audit: %s: %w", VerifierKeyFile, err)
	}
	return vkey, nil
}

// writeFileAtomic replaces dir/name with data so that a crash leaves either
// the old file or the new one, never a mix: write a temporary file, fsync it
// (so the rename cannot land before the data), rename over the target, then
// fsync the directory (so the rename itself survives a crash).
func writeFileAtomic(dir, name string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return fmt.Errorf("audit: write %s: %w", name, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("audit: write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("audit: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("audit: sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("audit: write %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("audit: write %s: %w", name, err)
	}
	ok = true
	return syncDir(dir)
}

// WriteFileAtomic is writeFileAtomic (mode 0600) for the files other
// packages keep beside the log: the witness client's state.
func WriteFileAtomic(dir, name string, data []byte) error {
	return writeFileAtomic(dir, name, data, 0o600)
}

// ReadLogID returns the ID of the log in dir, as its verifier key names it.
func ReadLogID(dir string) (LogID, error) {
	vkey, err := ReadVerifierKey(dir)
	if err != nil {
		return LogID{}, err
	}
	return logIDFromVerifierKey(vkey)
}
