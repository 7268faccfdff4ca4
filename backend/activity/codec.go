package activity

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/yettdev/yett/backend/audit"
)

// The encoding, inside the encryption: varints, strings as length and
// bytes, times as UnixNano (UTC). Version first, so a later layout can be
// told apart. Sessions come before the items, and the items newest first,
// each as a difference from the one before it: a loaded index decodes its
// newest items first, and only as far as pages need (see lazyItems).
const indexVersion = 3 // 2: authority details, drill calls; 3: calls' paths, vault changes' subjects

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
			e.u(uint64(it.detail))
			continue
		}
		e.flag(it.drill)
		e.s(it.requestID)
		e.s(it.path)
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
	if it.call = d.flag(); !it.call {
		it.detail = d.ref(nstr)
	} else {
		it.drill = d.flag()
		it.requestID = d.str()
		it.path = d.str()
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
