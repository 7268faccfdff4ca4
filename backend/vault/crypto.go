package vault

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/hkdf"
)

const macLen = sha256.Size

// DefaultKDF is what Create uses unless Options.KDF says otherwise: RFC
// 9106's second recommended setting. BenchmarkUnlock on 2 cores measured
// 73-77 ms per unlock when quiet and 0.24-0.31 s under heavy load
// (docs/vault-format.md); every guess costs an attacker 64 MiB and three
// passes.
var DefaultKDF = KDFParams{Time: 3, MemKiB: 64 * 1024, Threads: 4}

// sessionKeys exist only while the vault is unlocked. wipe zeroes them.
//
// Wiping is best effort: Go gives no guarantee that these bytes were never
// copied (the garbage collector moves nothing today, but the AEAD and HMAC
// implementations expand the key into their own state, the stack may hold
// transient copies, and memory can be swapped or dumped). We keep the
// copies few, build cipher objects per operation and drop them at once, and
// zero the slices we own.
type sessionKeys struct {
	data     []byte // the data key
	record   []byte // HKDF(data key, "record"): seals records
	manifest []byte // HKDF(data key, "manifest"): MACs the manifest
}

func deriveSessionKeys(dataKey []byte, vaultID [vaultIDLen]byte) *sessionKeys {
	k := &sessionKeys{data: append([]byte(nil), dataKey...)}
	k.record = hkdfKey(dataKey, vaultID[:], "yett record key v1")
	k.manifest = hkdfKey(dataKey, vaultID[:], "yett manifest key v1")
	return k
}

func hkdfKey(secret, salt []byte, info string) []byte {
	out := make([]byte, keyLen)
	if _, err := io.ReadFull(hkdf.New(sha256.New, secret, salt, []byte(info)), out); err != nil {
		panic("vault: hkdf: " + err.Error()) // only fails past 255*32 bytes
	}
	return out
}

func (k *sessionKeys) wipe() {
	if k == nil {
		return
	}
	clear(k.data)
	clear(k.record)
	clear(k.manifest)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("vault: no randomness: " + err.Error())
	}
	return b
}

func passphraseKey(p Passphrase, salt []byte, kdf KDFParams) []byte {
	return argon2.IDKey(p, salt, kdf.Time, kdf.MemKiB, kdf.Threads, keyLen)
}

// seal returns nonce || XChaCha20-Poly1305(key, plaintext, ad). Random
// 192-bit nonces make reuse under one key negligible without a counter.
func seal(key, plaintext, ad []byte) []byte {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		panic("vault: " + err.Error()) // key length is ours, always 32
	}
	nonce := randomBytes(nonceLen)
	return aead.Seal(nonce, nonce, plaintext, ad)
}

var errAuth = errors.New("authentication failed")

func open(key, nonce, ciphertext, ad []byte) ([]byte, error) {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		panic("vault: " + err.Error())
	}
	pt, err := aead.Open(nil, nonce, ciphertext, ad)
	if err != nil {
		return nil, errAuth
	}
	return pt, nil
}

func wrapKey(kek, dataKey, ad []byte) []byte { return seal(kek, dataKey, ad) }

func unwrapKey(kek, wrapped, ad []byte) ([]byte, error) {
	if err := checkWrappedKey(wrapped); err != nil {
		return nil, err
	}
	return open(kek, wrapped[:nonceLen], wrapped[nonceLen:], ad)
}

func passphraseWrapAD(h *header) []byte {
	ad := []byte("yett wrap passphrase v1\x00")
	ad = append(ad, h.VaultID[:]...)
	ad = binary.BigEndian.AppendUint32(ad, h.KDF.Time)
	ad = binary.BigEndian.AppendUint32(ad, h.KDF.MemKiB)
	return append(ad, h.KDF.Threads)
}

func keyringWrapAD(vaultID [vaultIDLen]byte) []byte {
	return append([]byte("yett wrap keyring v1\x00"), vaultID[:]...)
}

// recordAD binds a record's ciphertext to its vault, id, kind and version:
// moving a ciphertext to another row, or editing its kind or version column,
// makes authentication fail.
func recordAD(vaultID [vaultIDLen]byte, ref recordRef) []byte {
	ad := []byte("yett record v1\x00")
	ad = append(ad, vaultID[:]...)
	ad = append(ad, byte(len(ref.ID)))
	ad = append(ad, ref.ID...)
	ad = append(ad, byte(len(ref.Kind)))
	ad = append(ad, ref.Kind...)
	return binary.BigEndian.AppendUint64(ad, ref.Version)
}

func sealRecord(k *sessionKeys, vaultID [vaultIDLen]byte, ref recordRef, plaintext []byte) []byte {
	return append([]byte{envelopeV1}, seal(k.record, plaintext, recordAD(vaultID, ref))...)
}

func openRecord(k *sessionKeys, vaultID [vaultIDLen]byte, ref recordRef, sealed []byte) ([]byte, error) {
	nonce, ct, err := decodeEnvelope(sealed)
	if err != nil {
		return nil, err
	}
	return open(k.record, nonce, ct, recordAD(vaultID, ref))
}

func manifestMAC(k *sessionKeys, vaultID [vaultIDLen]byte, body []byte) []byte {
	m := hmac.New(sha256.New, k.manifest)
	m.Write([]byte("yett manifest v1\x00"))
	m.Write(vaultID[:])
	m.Write(body)
	return m.Sum(nil)
}

func encodeManifest(k *sessionKeys, vaultID [vaultIDLen]byte, m *manifest) []byte {
	body := m.body()
	return append(body, manifestMAC(k, vaultID, body)...)
}
