package rpcframe

import "encoding/json"

// idScanner recovers the top-level "id" of a frame that is too large to be
// kept, from the bytes as they stream past on their way to being discarded.
// Without it an oversized request is answered with id null, and a client that
// matches answers by id (the official SDK does) waits for its own timeout.
//
// It is a byte-at-a-time scanner of JSON structure that keeps only a few
// bytes: the depth, whether it is inside a string, the key being read at
// depth 1 (at most len("id")+1 bytes) and the id value (at most maxIDBytes).
// It does not validate the frame. It gives the value of the first top-level
// member spelled plainly "id", when the frame starts as an object and that
// value is a plain string or an integer that parseID accepts, and stops
// there: whatever follows (the rest of an 8 MiB body, a second "id", broken
// JSON) cannot take back the id of the call the client sent, and an id that
// comes before the overflow is always answered. An escaped key before it
// (it may spell "id") or an unusual value gives none, and the reply then
// says null, as for any frame whose id cannot be trusted.
type idScanner struct {
	started bool // saw the opening '{'
	bad     bool // the frame cannot yield an id
	depth   int
	inStr   bool
	escaped bool

	// At depth 1: keyPos says the next string is a key; inKey that the
	// current string is one; key collects it; afterKey that the key ended
	// and its ':' has not been seen yet; isID that the key was "id".
	keyPos   bool
	inKey    bool
	key      []byte
	afterKey bool
	isID     bool

	// wantValue: the ':' after "id" was seen and its value has not started;
	// inValue: the value is being collected into value.
	wantValue bool
	inValue   bool
	valStr    bool
	value     []byte
	done      bool // the value of the first "id" member is complete
}

// maxIDBytes bounds the id kept; a longer one is not echoed.
const maxIDBytes = 256

func (s *idScanner) feed(b []byte) {
	for _, c := range b {
		if s.bad || s.done {
			return
		}
		s.step(c)
	}
}

func (s *idScanner) step(c byte) {
	if !s.started {
		switch c {
		case ' ', '\t', '\r', '\n':
		case '{':
			s.started, s.depth, s.keyPos = true, 1, true
		default:
			s.bad = true
		}
		return
	}
	if s.inValue {
		s.valueByte(c)
		if s.bad || s.inValue {
			return
		}
		// A number ends at the byte after it, which is structure: go on
		// and read that byte as such.
		if s.valStr {
			return
		}
	}
	if s.inStr {
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
			if s.inKey {
				s.bad = true // an escaped key may spell "id"; do not guess
			}
		case c == '"':
			s.inStr = false
			if s.inKey {
				s.inKey, s.afterKey = false, true
				s.isID = string(s.key) == "id"
			}
		default:
			if s.inKey && len(s.key) <= 2 {
				s.key = append(s.key, c)
			} else if s.inKey {
				s.key = s.key[:3] // longer than "id": never equal
			}
		}
		return
	}
	switch c {
	case ' ', '\t', '\r', '\n':
		return
	case '"':
		s.inStr = true
		if s.depth == 1 && s.keyPos {
			s.keyPos, s.inKey, s.key = false, true, s.key[:0]
		}
	case ':':
		if s.depth == 1 && s.afterKey {
			s.afterKey = false
			if s.isID {
				s.wantValue = true
			}
		}
		return
	case ',':
		if s.depth == 1 {
			s.keyPos = true
		}
	case '{', '[':
		s.depth++
	case '}', ']':
		s.depth--
	}
	if s.wantValue {
		s.wantValue = false
		s.startValue(c)
	}
}

func (s *idScanner) startValue(c byte) {
	switch {
	case c == '"':
		s.inValue, s.valStr, s.value = true, true, append(s.value[:0], c)
		s.inStr = false // the value is read by valueByte, not as a string
	case c == '-' || (c >= '0' && c <= '9'):
		s.inValue, s.valStr, s.value = true, false, append(s.value[:0], c)
	default:
		s.bad = true // null, an object, an array: not a usable id
	}
}

func (s *idScanner) valueByte(c byte) {
	if s.valStr {
		switch c {
		case '\\':
			s.bad = true // escapes would need decoding; not worth the risk
			return
		case '"':
			s.value = append(s.value, c)
			s.inValue, s.done = false, true
			return
		}
		if len(s.value) >= maxIDBytes || c < 0x20 {
			s.bad = true
			return
		}
		s.value = append(s.value, c)
		return
	}
	if c >= '0' && c <= '9' {
		if len(s.value) >= 20 {
			s.bad = true
			return
		}
		s.value = append(s.value, c)
		return
	}
	if c == '.' || c == 'e' || c == 'E' {
		s.bad = true // not an integer id
		return
	}
	s.inValue, s.done = false, true
}

// id returns the recovered id as raw JSON, or nil for "answer with null".
func (s *idScanner) id() json.RawMessage {
	if s.bad || !s.done {
		return nil
	}
	raw := json.RawMessage(append([]byte(nil), s.value...))
	if _, err := parseID(raw); err != nil {
		return nil
	}
	return raw
}
