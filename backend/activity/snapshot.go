package activity

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"filippo.io/age"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/yettdev/yett/backend/audit"
)

// IndexFile is where the app keeps the index, in the audit log's directory,
// so that it is set aside with the log (a vault reset) and bound to it.
const IndexFile = "activity-index"

// The index file is the index encrypted under a key derived from the audit
// identity, so that it is exactly as readable as the log: by whoever holds
// the vault's audit key, and by nobody while the vault is locked. Nothing of
// it is kept in the clear; its length (about a hundred bytes per call or
// authority event) says roughly how many there are, which the log's record
// count already bounds.
//
//	"yett-activity-index v1\n"
//	24 bytes  nonce
//	...       XChaCha20-Poly1305 of the encoded index (see encode), with
//	          associated data: the first line and the log ID
const indexMagic = "yett-activity-index v1\n"

// IndexKey encrypts the index file of one log. It has no String method and
// is wiped with Wipe when the vault locks.
type IndexKey struct {
	logID audit.LogID
	key   []byte
}

// NewIndexKey derives the key of the index of the log logID from the audit
// identity: HKDF-SHA256 over the identity's encoding, salted with the log
// ID. The identity is not kept.
func NewIndexKey(identity *age.X25519Identity, logID audit.LogID) (*IndexKey, error) {
	secret := []byte(identity.String())
	defer clear(secret)
	key, err := hkdf.Key(sha256.New, secret, logID[:], "yett activity index v1", chacha20poly1305.KeySize)
	if err != nil {
		return nil, err
	}
	return &IndexKey{logID: logID, key: key}, nil
}

// Wipe overwrites the key; the IndexKey is useless afterwards.
func (k *IndexKey) Wipe() {
	if k != nil {
		clear(k.key)
		k.key = nil
	}
}

// ErrIndexUnusable: the index file is missing, of another log or another
// key, or damaged. The index is then rebuilt from the log.
var ErrIndexUnusable = errors.New("activity: index file unusable")

func (k *IndexKey) aead() (aeadCipher, error) {
	if k == nil || k.key == nil {
		return nil, errors.New("activity: index key wiped")
	}
	return chacha20poly1305.NewX(k.key)
}

type aeadCipher interface {
	Seal(dst, nonce, plaintext, ad []byte) []byte
	Open(dst, nonce, ciphertext, ad []byte) ([]byte, error)
}

func (k *IndexKey) ad() []byte { return append([]byte(indexMagic), k.logID[:]...) }

// Save writes the index encrypted to dir/IndexFile, replacing the file
// atomically: temporary file, fsync, rename, fsync of the directory. A crash
// leaves the old index or the new one; either is a correct index of a prefix
// of the log, and Load's caller catches up from its Next.
func (x *Index) Save(dir string, k *IndexKey) error {
	aead, err := k.aead()
	if err != nil {
		return err
	}
	pt, err := x.encode()
	if err != nil {
		return err
	}
	defer clear(pt)
	out := make([]byte, len(indexMagic)+chacha20poly1305.NonceSizeX, len(indexMagic)+chacha20poly1305.NonceSizeX+len(pt)+chacha20poly1305.Overhead)
	copy(out, indexMagic)
	nonce := out[len(indexMagic):]
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	out = aead.Seal(out, nonce, pt, k.ad())
	return writeFileAtomic(dir, IndexFile, out)
}

// LoadIndex reads the index of the log k belongs to from dir. A file that
// is missing, of another log or key, or damaged is ErrIndexUnusable.
func LoadIndex(dir string, k *IndexKey) (*Index, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: no index yet", ErrIndexUnusable)
	}
	if err != nil {
		return nil, err
	}
	head := len(indexMagic) + chacha20poly1305.NonceSizeX
	if len(b) < head || string(b[:len(indexMagic)]) != indexMagic {
		return nil, fmt.Errorf("%w: not an index file", ErrIndexUnusable)
	}
	pt, err := aead.Open(b[head:head], b[len(indexMagic):head], b[head:], k.ad())
	if err != nil {
		return nil, fmt.Errorf("%w: it does not open with this log's key", ErrIndexUnusable)
	}
	x, err := decodeIndex(pt, false)
	clear(pt) // the decoder keeps its own copy
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIndexUnusable, err)
	}
	return x, nil
}

// writeFileAtomic replaces dir/name with data (mode 0600): a temporary file,
// fsynced so the rename cannot land before the data, renamed over the
// target, then the directory fsynced so the rename survives a crash.
func writeFileAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	// Windows has no directory fsync (a directory handle cannot be
	// flushed); NTFS journals the rename itself.
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
