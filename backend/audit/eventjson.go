package audit

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/yettdev/yett/backend/jsonw"
)

// encodeEvent is json.Marshal(e), byte for byte. The events of a call's
// path (an action requested, refused or ended, a session approved) are
// written by hand, without reflection: the sealing of an entry spent most
// of its CPU in encoding/json (BenchmarkSeal). Any other event, or one with
// a field the hand path does not write, goes to encoding/json.
// FuzzEncodeEvent and TestEncodeEventKnowsEveryField hold the two to the
// same bytes.
func encodeEvent(e *Event) ([]byte, error) {
	if b, ok := appendEvent(make([]byte, 0, 384), e); ok {
		return b, nil
	}
	return json.Marshal(e)
}

// handWritten reports whether appendEvent writes every field e sets: the
// fields of a call's path, and nothing else.
func handWritten(e *Event) bool {
	return e.AuthorizationID == "" && e.OAuth == nil && e.Success == nil && e.Recovery == nil && e.SSH == nil &&
		e.NamedOperation == nil && e.VaultChange == nil && e.Answer == nil && e.Via == nil && e.Drill == nil &&
		e.Inventory == nil && e.Grant == nil && e.Access == nil && e.Witness == nil
}

// appendEvent appends e as encoding/json writes it, or reports false when
// e is not one it writes by hand.
func appendEvent(b []byte, e *Event) ([]byte, bool) {
	if !handWritten(e) {
		return b, false
	}
	b = append(b, `{"type":`...)
	b = jsonw.AppendString(b, string(e.Type))
	b = append(b, `,"time":`...)
	b, ok := appendTime(b, e.Time)
	if !ok {
		return b, false
	}
	b = appendOmitString(b, `,"boot_id":`, e.BootID)
	b = appendOmitString(b, `,"previous_boot_id":`, e.PreviousBootID)
	if e.VaultEpoch != 0 {
		b = append(b, `,"vault_epoch":`...)
		b = strconv.AppendUint(b, e.VaultEpoch, 10)
	}
	b = appendOmitString(b, `,"session_id":`, e.SessionID)
	b = appendOmitString(b, `,"approval_id":`, e.ApprovalID)
	if r := e.Run; r != nil {
		b = append(b, `,"run":{"run_id":`...)
		b = jsonw.AppendString(b, r.RunID)
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(r.PID), 10)
		b = append(b, `,"start_time":`...)
		if b, ok = appendTime(b, r.StartTime); !ok {
			return b, false
		}
		b = append(b, `,"executable":`...)
		b = jsonw.AppendString(b, r.Executable)
		b = append(b, `,"executable_sha256":`...)
		b = jsonw.AppendString(b, r.ExecutableHash)
		b = append(b, `,"signer":`...)
		b = jsonw.AppendString(b, r.Signer)
		if r.ParentPID != 0 {
			b = append(b, `,"parent_pid":`...)
			b = strconv.AppendInt(b, int64(r.ParentPID), 10)
		}
		b = append(b, `,"launch_nonce":`...)
		b = jsonw.AppendString(b, r.LaunchNonce)
		b = append(b, '}')
	}
	b = appendOmitString(b, `,"approved_by":`, e.ApprovedBy)
	b = appendOmitString(b, `,"surface":`, e.Surface)
	b = appendOmitString(b, `,"reason":`, string(e.Reason))
	if a := e.Action; a != nil {
		b = append(b, `,"action":{"request_id":`...)
		b = jsonw.AppendString(b, a.RequestID)
		b = append(b, `,"channel":`...)
		b = jsonw.AppendString(b, a.Channel)
		b = append(b, `,"operation":`...)
		b = jsonw.AppendString(b, a.Operation)
		b = append(b, `,"target":`...)
		b = jsonw.AppendString(b, a.Target)
		b = appendOmitString(b, `,"path":`, a.Path)
		b = appendOmitString(b, `,"credential_ref":`, a.CredentialRef)
		b = appendOmitString(b, `,"idempotency_ref":`, a.IdempotencyRef)
		b = appendOmitString(b, `,"arguments_sha256":`, a.ArgumentsSHA256)
		b = append(b, '}')
	}
	if r := e.Result; r != nil {
		b = append(b, `,"result":{"class":`...)
		b = jsonw.AppendString(b, string(r.Class))
		if r.Status != 0 {
			b = append(b, `,"status":`...)
			b = strconv.AppendInt(b, int64(r.Status), 10)
		}
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, r.Bytes, 10)
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, r.DurationMS, 10)
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendOmitString writes an omitempty string field: nothing when empty.
func appendOmitString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return jsonw.AppendString(append(b, key...), s)
}

// appendTime writes t as encoding/json does (its MarshalJSON), or reports
// false where that fails.
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	j, err := t.MarshalJSON()
	if err != nil {
		return b, false
	}
	return append(b, j...), true
}
