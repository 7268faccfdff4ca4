package journal

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends e's log payload, exactly the bytes json.Marshal
// gives for logRecord{V: 1, Entry: e} (FuzzRecordAsMarshal holds the two
// together), without reflection: every call writes two of these.
func appendRecord(b []byte, e *Entry) []byte {
	b = append(b, `{"v":1,"e":{"ID":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"Scope":`...)
	b = appendString(b, e.Scope)
	b = append(b, `,"Key":`...)
	b = appendString(b, e.Key)
	b = append(b, `,"BootID":`...)
	b = appendString(b, e.BootID)
	b = append(b, `,"RunID":`...)
	b = appendString(b, e.RunID)
	b = append(b, `,"Method":`...)
	b = appendString(b, e.Method)
	b = append(b, `,"Target":`...)
	b = appendString(b, e.Target)
	b = append(b, `,"Path":`...)
	b = appendString(b, e.Path)
	b = append(b, `,"CredentialRef":`...)
	b = appendString(b, e.CredentialRef)
	b = append(b, `,"RequestBytes":`...)
	b = strconv.AppendInt(b, e.RequestBytes, 10)
	b = append(b, `,"RequestSHA256":`...)
	b = appendString(b, e.RequestSHA256)
	b = append(b, `,"State":`...)
	b = appendString(b, string(e.State))
	b = append(b, `,"Reason":`...)
	b = appendString(b, e.Reason)
	b = append(b, `,"Result":{"Status":`...)
	b = strconv.AppendInt(b, int64(e.Result.Status), 10)
	b = append(b, `,"Class":`...)
	b = appendString(b, e.Result.Class)
	b = append(b, `,"ResponseBytes":`...)
	b = strconv.AppendInt(b, e.Result.ResponseBytes, 10)
	b = append(b, `,"ResponseSHA256":`...)
	b = appendString(b, e.Result.ResponseSHA256)
	b = append(b, `,"Truncated":`...)
	b = strconv.AppendBool(b, e.Result.Truncated)
	b = append(b, `},"CreatedAt":`...)
	var err error
	if b, err = appendTime(b, e.CreatedAt); err != nil {
		return nil
	}
	b = append(b, `,"UpdatedAt":`...)
	if b, err = appendTime(b, e.UpdatedAt); err != nil {
		return nil
	}
	return append(b, "}}"...)
}

// appendTime appends t as time.Time's MarshalJSON does; it fails where
// that does (a year outside 0-9999).
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y >= 10000 {
		_, err := t.MarshalJSON()
		return b, err
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s quoted as encoding/json does by default: ", \ and
// control characters escaped, <, > and & as \u003c and so on, U+2028 and
// U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// frameFallback is frame through encoding/json, for an entry appendRecord
// cannot write (a time json cannot encode either: the error is the same).
func frameFallback(e *Entry) ([]byte, error) {
	payload, err := json.Marshal(logRecord{V: 1, Entry: e})
	if err != nil {
		return nil, err
	}
	return framed(payload), nil
}

// framed puts a payload in its frame: length, CRC-32C, payload.
func framed(payload []byte) []byte {
	out := make([]byte, frameHeader+len(payload))
	binary.BigEndian.PutUint32(out, uint32(len(payload)))
	binary.BigEndian.PutUint32(out[4:], crc32Checksum(payload))
	copy(out[frameHeader:], payload)
	return out
}
