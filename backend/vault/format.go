package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// The binary encodings of what the vault persists. Every decoder here reads
// bytes an attacker with write access to the file controls, so each checks
// lengths before slicing and bounds every count; all are fuzzed.

const (
	headerMagic   = "YETTVLT1"
	manifestMagic = "YMF1"
	vaultIDLen    = 16
	keyLen        = 32
	nonceLen      = 24 // XChaCha20-Poly1305
	tagLen        = 16
	wrappedLen    = nonceLen + keyLen + tagLen
	checksumLen   = 16
	envelopeV1    = 1
	kdfArgon2id   = 1
	maxIDLen      = 64
	maxKindLen    = 32
	maxRecords    = 1 << 20
)

// KDFParams are the Argon2id parameters stored in the header.
type KDFParams struct {
	Time    uint32 // passes
	MemKiB  uint32 // memory in KiB
	Threads uint8
}

func (p KDFParams) String() string {
	mem := fmt.Sprintf("%dKiB", p.MemKiB)
	if p.MemKiB%1024 == 0 {
		mem = fmt.Sprintf("%dMiB", p.MemKiB/1024)
	}
	return fmt.Sprintf("argon2id t=%d m=%s p=%d", p.Time, mem, p.Threads)
}

func (p KDFParams) validate() error {
	switch {
	case p.Time < 1 || p.Time > 64:
		return fmt.Errorf("argon2id time %d outside 1..64", p.Time)
	case p.Threads < 1 || p.Threads > 64:
		return fmt.Errorf("argon2id threads %d outside 1..64", p.Threads)
	case p.MemKiB < 8*uint32(p.Threads) || p.MemKiB > 4<<20:
		return fmt.Errorf("argon2id memory %d KiB outside %d KiB..4 GiB", p.MemKiB, 8*uint32(p.Threads))
	}
	return nil
}

// header is the vault_meta.header column: who the vault is, how the
// passphrase key is derived, and the data key wrapped by it. The trailing
// checksum is not security (anyone can recompute it); it tells accidental
// corruption apart from a wrong passphrase, which would otherwise look alike.
type header struct {
	VaultID [vaultIDLen]byte
	KDF     KDFParams
	Salt    []byte
	Wrapped []byte // wrappedKey encoding, under the passphrase key
}

func (h *header) encode() []byte {
	var b bytes.Buffer
	b.WriteString(headerMagic)
	b.Write(h.VaultID[:])
	b.WriteByte(kdfArgon2id)
	binary.Write(&b, binary.BigEndian, h.KDF.Time)
	binary.Write(&b, binary.BigEndian, h.KDF.MemKiB)
	b.WriteByte(h.KDF.Threads)
	b.WriteByte(byte(len(h.Salt)))
	b.Write(h.Salt)
	binary.Write(&b, binary.BigEndian, uint16(len(h.Wrapped)))
	b.Write(h.Wrapped)
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:checksumLen])
	return b.Bytes()
}

func decodeHeader(data []byte) (*header, error) {
	if len(data) < checksumLen+len(headerMagic) {
		return nil, errors.New("header too short")
	}
	body, sum := data[:len(data)-checksumLen], data[len(data)-checksumLen:]
	want := sha256.Sum256(body)
	if !bytes.Equal(sum, want[:checksumLen]) {
		return nil, errors.New("header checksum mismatch (the header bytes were altered or corrupted)")
	}
	r := reader{b: body}
	if string(r.next(len(headerMagic))) != headerMagic {
		return nil, errors.New("header has an unknown format (bad magic)")
	}
	h := &header{}
	copy(h.VaultID[:], r.next(vaultIDLen))
	if kdf := r.byte(); kdf != kdfArgon2id && r.err == nil {
		return nil, fmt.Errorf("header names unknown KDF %d", kdf)
	}
	h.KDF.Time = r.u32()
	h.KDF.MemKiB = r.u32()
	h.KDF.Threads = r.byte()
	h.Salt = bytes.Clone(r.next(int(r.byte())))
	h.Wrapped = bytes.Clone(r.next(int(r.u16())))
	if r.err != nil {
		return nil, fmt.Errorf("header: %w", r.err)
	}
	if r.left() != 0 {
		return nil, errors.New("header has trailing bytes")
	}
	if err := h.KDF.validate(); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if len(h.Salt) < 16 {
		return nil, errors.New("header: salt shorter than 16 bytes")
	}
	if err := checkWrappedKey(h.Wrapped); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return h, nil
}

// A wrapped key is nonce || XChaCha20-Poly1305(data key): fixed length.
func checkWrappedKey(b []byte) error {
	if len(b) != wrappedLen {
		return fmt.Errorf("wrapped key is %d bytes, want %d", len(b), wrappedLen)
	}
	return nil
}

// A sealed record envelope is version byte || nonce || ciphertext+tag.
func decodeEnvelope(b []byte) (nonce, ciphertext []byte, err error) {
	if len(b) < 1+nonceLen+tagLen {
		return nil, nil, fmt.Errorf("sealed envelope is %d bytes, too short", len(b))
	}
	if b[0] != envelopeV1 {
		return nil, nil, fmt.Errorf("sealed envelope has unknown version %d", b[0])
	}
	return b[1 : 1+nonceLen], b[1+nonceLen:], nil
}

// recordRef is what the manifest knows of a record.
type recordRef struct {
	ID      string
	Kind    string
	Version uint64
}

// manifest lists every record the vault holds, at the epoch it was written.
// The MAC (HMAC-SHA256 under a key derived from the data key) is checked at
// unlock, so deleting, re-adding or rolling back a single row is caught.
type manifest struct {
	Epoch   uint64
	Records []recordRef // sorted by ID
}

// body is the MAC'd part; encode appends the MAC.
func (m *manifest) body() []byte {
	refs := append([]recordRef(nil), m.Records...)
	sort.Slice(refs, func(i, j int) bool { return refs[i].ID < refs[j].ID })
	var b bytes.Buffer
	b.WriteString(manifestMagic)
	binary.Write(&b, binary.BigEndian, m.Epoch)
	binary.Write(&b, binary.BigEndian, uint32(len(refs)))
	for _, r := range refs {
		b.WriteByte(byte(len(r.ID)))
		b.WriteString(r.ID)
		b.WriteByte(byte(len(r.Kind)))
		b.WriteString(r.Kind)
		binary.Write(&b, binary.BigEndian, r.Version)
	}
	return b.Bytes()
}

// decodeManifest parses the structure; the MAC is returned for the caller
// to check, since only an unlocked vault has the key.
func decodeManifest(data []byte) (m *manifest, body, mac []byte, err error) {
	if len(data) < len(manifestMagic)+8+4+macLen {
		return nil, nil, nil, errors.New("manifest too short")
	}
	body, mac = data[:len(data)-macLen], data[len(data)-macLen:]
	r := reader{b: body}
	if string(r.next(len(manifestMagic))) != manifestMagic {
		return nil, nil, nil, errors.New("manifest has an unknown format (bad magic)")
	}
	m = &manifest{Epoch: r.u64()}
	n := r.u32()
	if n > maxRecords || int(n) > r.left()/10 {
		return nil, nil, nil, fmt.Errorf("manifest claims %d records, more than it can hold", n)
	}
	m.Records = make([]recordRef, 0, n)
	prev := ""
	for i := uint32(0); i < n && r.err == nil; i++ {
		ref := recordRef{ID: string(r.next(int(r.byte())))}
		ref.Kind = string(r.next(int(r.byte())))
		ref.Version = r.u64()
		if r.err == nil && (ref.ID == "" || (i > 0 && ref.ID <= prev)) {
			return nil, nil, nil, errors.New("manifest record ids are not strictly sorted")
		}
		prev = ref.ID
		m.Records = append(m.Records, ref)
	}
	if r.err != nil {
		return nil, nil, nil, fmt.Errorf("manifest: %w", r.err)
	}
	if r.left() != 0 {
		return nil, nil, nil, errors.New("manifest has trailing bytes")
	}
	return m, body, mac, nil
}

// reader consumes big-endian fields, remembering the first short read so
// decoders check once at the end instead of after every field.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("truncated")

func (r *reader) next(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errShort
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) left() int { return len(r.b) }

func (r *reader) byte() byte {
	if b := r.next(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.next(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.next(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.next(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}
