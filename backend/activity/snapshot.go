package activity

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

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

// The encoding, inside the encryption: varints, strings as length and
// bytes, times as UnixNano (UTC). Version first, so a later layout can be
// told apart. Sessions come before the items, and the items newest first,
// each as a difference from the one before it: a loaded index decodes its
// newest items first, and only as far as pages need (see lazyItems).
const indexVersion = 1

type encoder struct{ b []byte }

func (e *encoder) u(v uint64)    { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) i(v int64)     { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) s(v string)    { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *encoder) t(v time.Time) { e.i(unixNano(v)) }
func (e *encoder) flag(v bool)   { e.b = append(e.b, boolByte(v)) }

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// encode renders the whole index; a loaded one is decoded in full first.
func (x *Index) encode() ([]byte, error) {
	x.decodeDownTo(0)
	if x.damaged != nil {
		return nil, x.damaged
	}
	e := &encoder{b: make([]byte, 0, 64+len(x.items)*24+len(x.sessions)*160)}
	e.u(indexVersion)
	for _, v := range []int64{x.next.Index, x.next.Offset, x.next.Segment, x.next.SegmentOffset, x.entries} {
		e.i(v)
	}
	e.u(uint64(len(x.strs) - 1)) // strs[0] is always ""
	for _, s := range x.strs[1:] {
		e.s(s)
	}
	e.u(uint64(len(x.sessions)))
	for _, s := range x.sessions {
		for _, v := range []string{s.ID, s.ApprovalID, s.BootID, s.ApprovedBy, s.Surface, string(s.EndReason)} {
			e.s(v)
		}
		e.u(s.VaultEpoch)
		e.t(s.ApprovedAt)
		e.t(s.EndedAt)
		e.flag(s.Ended)
		e.flag(s.EndInferred)
		e.u(uint64(s.Calls))
		e.i(s.FirstIndex)
		e.i(s.LastIndex)
		e.flag(s.Run != nil)
		if r := s.Run; r != nil {
			for _, v := range []string{r.RunID, r.Executable, r.ExecutableHash, r.Signer, r.LaunchNonce} {
				e.s(v)
			}
			e.i(int64(r.PID))
			e.i(int64(r.ParentPID))
			e.t(r.StartTime)
		}
	}
	e.u(uint64(len(x.items)))
	var prev item
	for k := len(x.items) - 1; k >= 0; k-- {
		it := &x.items[k]
		e.i(prev.index - it.index)
		e.i(prev.time - it.time)
		prev.index, prev.time = it.index, it.time
		for _, id := range []uint32{it.typ, it.session, it.reason, it.boot} {
			e.u(uint64(id))
		}
		e.u(it.epoch)
		e.flag(it.call)
		if !it.call {
			continue
		}
		e.s(it.requestID)
		for _, id := range []uint32{it.channel, it.operation, it.target, it.credRef, it.denyReason} {
			e.u(uint64(id))
		}
		e.b = append(e.b, it.state)
		e.flag(it.dispatchedAt != noTime)
		if it.dispatchedAt != noTime {
			e.i(it.dispatchedAt - it.time)
		}
		e.flag(it.hasResult)
		if it.hasResult {
			e.u(uint64(it.resultClass))
			e.i(int64(it.result.Status))
			e.i(it.result.Bytes)
			e.i(it.result.DurationMS)
		}
		e.u(uint64(len(it.indexes)))
		last := it.index
		for _, ix := range it.indexes {
			e.i(ix - last)
			last = ix
		}
	}
	return e.b, nil
}

// decoder reads what encoder wrote, from a string: strings are cut from it
// without a copy each, and the caller can wipe the byte buffer it came from
// at once. The first problem sticks in err; every later read returns zero.
type decoder struct {
	s   string
	err error
}

var errBadIndex = errors.New("malformed index")

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errBadIndex
	}
	d.s = ""
}

// u is binary.Uvarint over a string, with a fast path for one byte: most
// values are small.
func (d *decoder) u() uint64 {
	if len(d.s) > 0 && d.s[0] < 0x80 {
		v := d.s[0]
		d.s = d.s[1:]
		return uint64(v)
	}
	var v uint64
	for k := 0; k < len(d.s) && k < binary.MaxVarintLen64; k++ {
		b := d.s[k]
		if b < 0x80 {
			if k == binary.MaxVarintLen64-1 && b > 1 {
				break // overflow
			}
			d.s = d.s[k+1:]
			return v | uint64(b)<<(7*k)
		}
		v |= uint64(b&0x7f) << (7 * k)
	}
	d.fail()
	return 0
}

func (d *decoder) i() int64 {
	v := d.u()
	return int64(v>>1) ^ -int64(v&1) // zig-zag, as binary.Varint
}

// count reads a length that must fit in what is left, at least min bytes
// per element: a corrupt count cannot make the decoder allocate much.
func (d *decoder) count(min int) int {
	n := d.u()
	if n > uint64(len(d.s)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.count(1)
	v := d.s[:n]
	d.s = d.s[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.s) == 0 {
		d.fail()
		return 0
	}
	v := d.s[0]
	d.s = d.s[1:]
	return v
}

func (d *decoder) flag() bool {
	v := d.byte()
	if v > 1 {
		d.fail()
	}
	return v == 1
}

func (d *decoder) t() time.Time { return fromUnixNano(d.i()) }

func (d *decoder) ref(n int) uint32 {
	v := d.u()
	if v >= uint64(n) {
		d.fail()
		return 0
	}
	return uint32(v)
}

// decodeIndex decodes everything but the items, which stay for lazyItems
// to decode as they are needed. full decodes them all now.
func decodeIndex(b []byte, full bool) (*Index, error) {
	d := &decoder{s: string(b)}
	if d.u() != indexVersion {
		return nil, errBadIndex
	}
	x := NewIndex()
	x.calls = nil // built when the first call entry is added
	x.next = audit.Position{Index: d.i(), Offset: d.i(), Segment: d.i(), SegmentOffset: d.i()}
	x.entries = d.i()
	ns := d.count(1)
	x.strIDs = make(map[string]uint32, ns+1)
	x.strIDs[""] = 0
	for range ns {
		s := d.str()
		if _, dup := x.strIDs[s]; dup {
			d.fail()
		}
		x.intern(s)
	}
	if err := decodeSessions(d, x); err != nil {
		return nil, err
	}
	n := d.count(7)
	if d.err != nil {
		return nil, d.err
	}
	x.items = make([]item, n)
	x.lazy = &lazyItems{d: d, left: n}
	if n == 0 || full {
		if x.decodeDownTo(0); x.damaged != nil {
			return nil, x.damaged
		}
	}
	return x, nil
}

func decodeSessions(d *decoder, x *Index) error {
	n := d.count(16)
	x.sessions = make([]*Session, n)
	x.byID = make(map[string]*Session, n)
	for k := range x.sessions {
		s := &Session{}
		s.ID, s.ApprovalID, s.BootID, s.ApprovedBy, s.Surface, s.EndReason = d.str(), d.str(), d.str(), d.str(), d.str(), audit.Reason(d.str())
		s.VaultEpoch = d.u()
		s.ApprovedAt, s.EndedAt = d.t(), d.t()
		s.Ended, s.EndInferred = d.flag(), d.flag()
		s.Calls = int(d.u())
		s.FirstIndex, s.LastIndex = d.i(), d.i()
		if d.flag() {
			r := &audit.RunBinding{RunID: d.str(), Executable: d.str(), ExecutableHash: d.str(), Signer: d.str(), LaunchNonce: d.str()}
			r.PID, r.ParentPID, r.StartTime = int(d.i()), int(d.i()), d.t()
			s.Run = r
		}
		if _, dup := x.byID[s.ID]; dup || (k > 0 && s.FirstIndex <= x.sessions[k-1].FirstIndex) {
			d.fail()
		}
		if d.err != nil {
			return d.err
		}
		x.sessions[k], x.byID[s.ID] = s, s
		if !s.Ended {
			x.open[s] = true
		}
	}
	return nil
}

// lazyItems decodes a loaded index's items, newest first, one at a time.
type lazyItems struct {
	d       *decoder
	left    int // items[:left] are not decoded yet
	started bool
	prev    item
	// indexes of the calls decoded so far, in a few large arrays rather
	// than one allocation per call.
	arena []int64
}

func (l *lazyItems) next(x *Index) error {
	d := l.d
	nstr := len(x.strs)
	l.left--
	it := &x.items[l.left]
	it.index, it.time = l.prev.index-d.i(), l.prev.time-d.i()
	if (l.started && it.index >= l.prev.index) || it.index < 0 || it.time == noTime {
		d.fail()
	}
	l.started = true
	l.prev.index, l.prev.time = it.index, it.time
	it.typ, it.session, it.reason, it.boot = d.ref(nstr), d.ref(nstr), d.ref(nstr), d.ref(nstr)
	it.epoch = d.u()
	it.dispatchedAt = noTime
	if it.call = d.flag(); it.call {
		it.requestID = d.str()
		it.channel, it.operation, it.target, it.credRef, it.denyReason = d.ref(nstr), d.ref(nstr), d.ref(nstr), d.ref(nstr), d.ref(nstr)
		if it.state = d.byte(); int(it.state) >= len(states) {
			d.fail()
		}
		if d.flag() {
			if it.dispatchedAt = it.time + d.i(); it.dispatchedAt == noTime {
				d.fail()
			}
		}
		if it.hasResult = d.flag(); it.hasResult {
			it.resultClass = d.ref(nstr)
			it.result = audit.Result{Class: audit.ResultClass(x.strs[it.resultClass]), Status: int(d.i()), Bytes: d.i(), DurationMS: d.i()}
		}
		m := d.count(1)
		if cap(l.arena)-len(l.arena) < m {
			l.arena = make([]int64, 0, max(m, 4096))
		}
		start, last := len(l.arena), it.index
		for range m {
			last += d.i()
			l.arena = append(l.arena, last)
		}
		// Capped at its length, so that appending to it (a later entry of
		// the call) copies rather than overwrites the next call's.
		it.indexes = l.arena[start:len(l.arena):len(l.arena)]
	}
	if d.err == nil && l.left == 0 && len(d.s) != 0 {
		d.fail()
	}
	if d.err != nil {
		*it = item{}
		return d.err
	}
	if l.left == 0 {
		x.lazy = nil
	}
	return nil
}
