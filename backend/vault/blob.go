package vault

import (
	"errors"
	"fmt"
	"strings"
)

// Blobs are secrets that other packages keep outside the vault's own file
// (OAuth refresh tokens, cached access tokens, client and DPoP keys in the
// oauth database) but under the vault's data key: SealBlob and OpenBlob work
// only while the vault is unlocked, with a key derived from the data key for
// one purpose, and the key itself never leaves this package. Associated data
// chosen by the caller binds each blob to its row, field and generation, so
// a blob copied to another row or an older generation fails to open.
//
// A blob is not listed in the manifest: its rollback protection is the
// caller's generation counter, which is weaker than a record's. It suits
// secrets whose rollback does no harm beyond a failed use (a superseded
// refresh token is refused by the provider).

// ErrBlob is returned by OpenBlob for a blob that does not authenticate
// (altered, moved, from another vault or another purpose).
var ErrBlob = errors.New("vault: sealed blob does not authenticate")

func blobKeyInfo(purpose string) (string, error) {
	if purpose == "" || len(purpose) > 64 || strings.ContainsAny(purpose, "\x00\n") {
		return "", fmt.Errorf("%w: blob purpose", ErrInvalid)
	}
	return "yett blob key v1\x00" + purpose, nil
}

func blobAD(purpose string, ad []byte) []byte {
	out := append([]byte("yett blob v1\x00"), byte(len(purpose)))
	out = append(out, purpose...)
	return append(out, ad...)
}

// withBlobKey runs use with purpose's key while the vault is unlocked, and
// clears the key afterwards.
func (v *session) withBlobKey(purpose string, use func(key []byte) error) error {
	info, err := blobKeyInfo(purpose)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return err
	}
	key := hkdfKey(v.keys.data, v.hdr.VaultID[:], info)
	defer clear(key)
	return use(key)
}

// SealBlob seals plaintext for purpose. Errors: ErrLocked (and the other
// states' errors), ErrInvalid for a bad purpose.
func (v *Vault) SealBlob(purpose string, ad, plaintext []byte) ([]byte, error) {
	var out []byte
	err := v.session().withBlobKey(purpose, func(key []byte) error {
		out = append([]byte{envelopeV1}, seal(key, plaintext, blobAD(purpose, ad))...)
		return nil
	})
	return out, err
}

// OpenBlob opens what SealBlob sealed with the same purpose and associated
// data. The caller owns (and should clear) the plaintext. Errors: ErrLocked
// and the other states' errors, ErrInvalid, ErrBlob.
func (v *Vault) OpenBlob(purpose string, ad, sealed []byte) ([]byte, error) {
	if _, err := blobKeyInfo(purpose); err != nil {
		return nil, err
	}
	nonce, ct, err := decodeEnvelope(sealed)
	if err != nil {
		return nil, ErrBlob
	}
	var pt []byte
	err = v.session().withBlobKey(purpose, func(key []byte) error {
		var err error
		if pt, err = open(key, nonce, ct, blobAD(purpose, ad)); err != nil {
			return ErrBlob
		}
		return nil
	})
	return pt, err
}

// VaultID returns the vault's id as hex ("" before Create). Blobs are bound
// to it through the key; callers use it to tell a reset vault's blobs.
func (v *Vault) VaultID() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.hdr == nil {
		return ""
	}
	return fmt.Sprintf("%x", v.hdr.VaultID[:])
}
