package audit

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"filippo.io/age"
	"golang.org/x/crypto/chacha20poly1305"
)

// Entries are sealed in segments. A segment starts with a segment-key record
// (kind 'K'): a fresh random key sealed to the audit recipient with age, the
// only public-key operation of the segment. Every event record of the segment
// is sealed under that key with XChaCha20-Poly1305, so the writer pays one
// X25519 per segment instead of one per entry, and a reader holding the
// identity unwraps one key per segment and then decrypts symmetrically.
//
// The writer keeps the key in memory only while the segment lasts (see
// Log.endSegmentLocked for when that is) and overwrites it when the segment
// ends. Without the key, what the writer wrote is sealed to the recipient
// again: blind write holds for every ended segment.

// Event payload layout, format 2:
//
//	0   1   version, entryV2
//	1   8   segment: index of the segment-key record, big-endian
//	9   24  nonce, random
//	33  ... XChaCha20-Poly1305 ciphertext of the event JSON, with its tag
//
// The associated data is the body up to the nonce: kind, log ID, index,
// version and segment. A ciphertext moved to another position, log or
// segment, or with its header rewritten to fit, does not open.
const (
	entryV2       byte = 0x02
	entryHeader        = 1 + 8
	entryAD            = bodyPrefix + entryHeader
	entryOverhead      = entryHeader + chacha20poly1305.NonceSizeX + chacha20poly1305.Overhead
	segmentKeyLen      = chacha20poly1305.KeySize
	// segmentKeyPlain is the plaintext of a segment-key record: log ID,
	// index and key, so that a key record moved elsewhere is caught.
	segmentKeyPlain = logIDSize + 8 + segmentKeyLen
)

// ageMagic starts every age file: the payload of a segment-key record, and
// of an event record written by format 1 (one age file per entry).
var ageMagic = []byte("age-encryption.org/v1\n")

// segmentKey is one segment's symmetric key, as the writer or a reader holds
// it. It has no String method and is never logged.
type segmentKey struct {
	index int64 // index of the segment-key record
	aead  cipher.AEAD
}

// newSegmentKey keeps key in an AEAD and clears the caller's copy.
func newSegmentKey(index int64, key []byte) (*segmentKey, error) {
	aead, err := chacha20poly1305.NewX(key)
	clear(key)
	if err != nil {
		return nil, err
	}
	return &segmentKey{index: index, aead: aead}, nil
}

// wipe overwrites the key. The AEAD keeps its own copy of the key in a
// struct this package cannot name, so wipe zeroes the whole struct the AEAD
// points to (TestSegmentKeyWipe proves the key is gone afterwards).
// Go gives no stronger promise: per-message subkeys the AEAD derived while
// sealing may stay in freed memory until it is reused.
func (k *segmentKey) wipe() {
	if k == nil || k.aead == nil {
		return
	}
	if v := reflect.ValueOf(k.aead); v.Kind() == reflect.Pointer && !v.IsNil() {
		e := v.Elem()
		reflect.NewAt(e.Type(), v.UnsafePointer()).Elem().SetZero()
	}
	k.aead = nil
}

// newSegment makes a fresh key for the segment whose key record is at index
// and returns it with the record's payload: the key sealed to recipient.
func newSegment(recipient age.Recipient, id LogID, index int64) (*segmentKey, []byte, error) {
	pt := make([]byte, segmentKeyPlain)
	copy(pt, id[:])
	binary.BigEndian.PutUint64(pt[logIDSize:], uint64(index))
	key := pt[logIDSize+8:]
	if _, err := rand.Read(key); err != nil {
		return nil, nil, fmt.Errorf("audit: segment key: %w", err)
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, recipient)
	if err == nil {
		_, err = w.Write(pt)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		clear(pt)
		return nil, nil, fmt.Errorf("audit: seal segment key: %w", err)
	}
	seg, err := newSegmentKey(index, key) // clears key
	clear(pt)
	if err != nil {
		return nil, nil, err
	}
	return seg, buf.Bytes(), nil
}

// openSegment unwraps the key of a segment-key record with identity.
func openSegment(rec Record, identity age.Identity) (*segmentKey, error) {
	r, err := age.Decrypt(bytes.NewReader(rec.Payload), identity)
	if err != nil {
		return nil, fmt.Errorf("audit: segment key %d: %w", rec.Index, err)
	}
	pt := make([]byte, segmentKeyPlain+1)
	n, err := io.ReadFull(r, pt)
	switch {
	case n == segmentKeyPlain && err == io.ErrUnexpectedEOF: // exactly one key
	case err != nil && err != io.ErrUnexpectedEOF && err != io.EOF:
		clear(pt)
		return nil, fmt.Errorf("audit: segment key %d: %w", rec.Index, err)
	default:
		clear(pt)
		return nil, fmt.Errorf("%w: record %d does not hold a segment key", ErrMisplaced, rec.Index)
	}
	if !bytes.Equal(pt[:logIDSize], rec.LogID[:]) || int64(binary.BigEndian.Uint64(pt[logIDSize:])) != rec.Index {
		clear(pt)
		return nil, fmt.Errorf("%w: segment key %d", ErrMisplaced, rec.Index)
	}
	return newSegmentKey(rec.Index, pt[logIDSize+8:segmentKeyPlain]) // clears the key bytes
}

// sealedEntry builds the framed event record at index, sealed under seg,
// with its checksums, and returns it with its leaf hash. It needs no lock:
// appenders seal in parallel once they hold their index.
func sealedEntry(seg *segmentKey, id LogID, index int64, e *Event) ([]byte, [32]byte, error) {
	pt, err := encodeEvent(e)
	if err != nil {
		return nil, [32]byte{}, fmt.Errorf("audit: encode event: %w", err)
	}
	defer clear(pt)
	if len(pt)+entryOverhead > MaxBodySize-bodyPrefix {
		return nil, [32]byte{}, ErrEntryTooLarge
	}
	rec := newRecord(KindEvent, id, index, entryOverhead+len(pt))
	p := rec[frameHeader+bodyPrefix:]
	p[0] = entryV2
	binary.BigEndian.PutUint64(p[1:], uint64(seg.index))
	nonce := p[entryHeader : entryHeader+chacha20poly1305.NonceSizeX]
	if _, err := rand.Read(nonce); err != nil {
		return nil, [32]byte{}, fmt.Errorf("audit: nonce: %w", err)
	}
	ct := p[entryHeader+len(nonce):]
	seg.aead.Seal(ct[:0], nonce, pt, rec[frameHeader:frameHeader+entryAD])
	return rec, finishRecord(rec), nil
}

// ErrMisplaced is returned when a sealed entry or segment key does not belong
// at its position: it names another log, index or segment, or does not open
// under the key of the segment it names.
var ErrMisplaced = errors.New("audit: sealed entry does not belong at this position")

// openEntry decrypts a format-2 event record with its segment's key.
func openEntry(rec Record, seg *segmentKey) (Event, error) {
	if seg == nil || entrySegment(rec) != seg.index {
		return Event{}, fmt.Errorf("%w: entry %d is not in the segment before it", ErrMisplaced, rec.Index)
	}
	p := rec.Payload
	nonce := p[entryHeader : entryHeader+chacha20poly1305.NonceSizeX]
	pt, err := seg.aead.Open(nil, nonce, p[entryHeader+len(nonce):], rec.Body[:entryAD])
	if err != nil {
		return Event{}, fmt.Errorf("%w: entry %d does not open under segment key %d", ErrMisplaced, rec.Index, seg.index)
	}
	defer clear(pt)
	var e Event
	if err := json.Unmarshal(pt, &e); err != nil { // whole plaintext, no trailing bytes
		return Event{}, fmt.Errorf("audit: decode entry %d: %w", rec.Index, err)
	}
	return e, nil
}

// entrySegment is the segment a format-2 event record names; -1 for a
// payload that is not format 2.
func entrySegment(rec Record) int64 {
	if len(rec.Payload) < entryOverhead || rec.Payload[0] != entryV2 {
		return -1
	}
	s := binary.BigEndian.Uint64(rec.Payload[1:])
	if s > 1<<62 {
		return -1
	}
	return int64(s)
}

// sealedV1 is the plaintext of a format-1 event record (one age file per
// entry). Format 1 logs are still read and verified; nothing writes them.
type sealedV1 struct {
	V     int    `json:"v"`
	Log   string `json:"log"`
	Index int64  `json:"index"`
	Event Event  `json:"event"`
}

// openV1 decrypts a format-1 event record with identity and checks its
// position.
func openV1(rec Record, identity age.Identity) (Event, error) {
	r, err := age.Decrypt(bytes.NewReader(rec.Payload), identity)
	if err != nil {
		return Event{}, fmt.Errorf("audit: decrypt entry %d: %w", rec.Index, err)
	}
	pt, err := io.ReadAll(io.LimitReader(r, MaxBodySize))
	if err != nil {
		return Event{}, fmt.Errorf("audit: decrypt entry %d: %w", rec.Index, err)
	}
	var s sealedV1
	if err := json.Unmarshal(pt, &s); err != nil {
		return Event{}, fmt.Errorf("audit: decode entry %d: %w", rec.Index, err)
	}
	if s.V != 1 || s.Log != hex.EncodeToString(rec.LogID[:]) || s.Index != rec.Index {
		return Event{}, fmt.Errorf("%w: entry %d", ErrMisplaced, rec.Index)
	}
	return s.Event, nil
}

// segmentRules follows the segment structure of a log as its records pass,
// without any key: every format-2 event names the newest segment-key record
// before it, and format-1 events (age files) only come before the first
// segment key, since a log written by format 1 may be continued by format 2
// but never the other way.
type segmentRules struct {
	current int64 // index of the newest segment-key record, -1 before the first
}

func (s *segmentRules) check(rec Record) error {
	switch rec.Kind {
	case KindSegmentKey:
		if !bytes.HasPrefix(rec.Payload, ageMagic) {
			return fmt.Errorf("%w: segment key %d is not an age file", ErrBadBody, rec.Index)
		}
		s.current = rec.Index
	case KindEvent:
		switch seg := entrySegment(rec); {
		case seg >= 0 && (s.current < 0 || seg != s.current):
			return fmt.Errorf("%w: entry %d names segment %d, the newest segment key before it is %d", ErrBadSegment, rec.Index, seg, s.current)
		case seg >= 0:
		case !bytes.HasPrefix(rec.Payload, ageMagic):
			return fmt.Errorf("%w: entry %d is not a sealed event", ErrBadBody, rec.Index)
		case s.current >= 0:
			return fmt.Errorf("%w: format-1 entry %d after segment key %d", ErrBadSegment, rec.Index, s.current)
		}
	}
	return nil
}
