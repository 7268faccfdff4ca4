package journal

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"time"

	"github.com/yettdev/yett/backend/jsonw"
)

// appendRecord appends e's log payload, exactly the bytes json.Marshal
// gives for logRecord{V: 1, Entry: e} (FuzzRecordAsMarshal holds the two
// together), without reflection: every call writes two of these.
func appendRecord(b []byte, e *Entry) []byte {
	b = append(b, `{"v":1,"e":{"ID":`...)
	b = jsonw.AppendString(b, e.ID)
	b = append(b, `,"Scope":`...)
	b = jsonw.AppendString(b, e.Scope)
	b = append(b, `,"Key":`...)
	b = jsonw.AppendString(b, e.Key)
	b = append(b, `,"BootID":`...)
	b = jsonw.AppendString(b, e.BootID)
	b = append(b, `,"RunID":`...)
	b = jsonw.AppendString(b, e.RunID)
	b = append(b, `,"Method":`...)
	b = jsonw.AppendString(b, e.Method)
	b = append(b, `,"Target":`...)
	b = jsonw.AppendString(b, e.Target)
	b = append(b, `,"Path":`...)
	b = jsonw.AppendString(b, e.Path)
	b = append(b, `,"CredentialRef":`...)
	b = jsonw.AppendString(b, e.CredentialRef)
	b = append(b, `,"RequestBytes":`...)
	b = strconv.AppendInt(b, e.RequestBytes, 10)
	b = append(b, `,"RequestSHA256":`...)
	b = jsonw.AppendString(b, e.RequestSHA256)
	b = append(b, `,"State":`...)
	b = jsonw.AppendString(b, string(e.State))
	b = append(b, `,"Reason":`...)
	b = jsonw.AppendString(b, e.Reason)
	b = append(b, `,"Result":{"Status":`...)
	b = strconv.AppendInt(b, int64(e.Result.Status), 10)
	b = append(b, `,"Class":`...)
	b = jsonw.AppendString(b, e.Result.Class)
	b = append(b, `,"ResponseBytes":`...)
	b = strconv.AppendInt(b, e.Result.ResponseBytes, 10)
	b = append(b, `,"ResponseSHA256":`...)
	b = jsonw.AppendString(b, e.Result.ResponseSHA256)
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
