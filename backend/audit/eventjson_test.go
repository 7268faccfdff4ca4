package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzEncodeEvent: the events written by hand come out as encoding/json
// writes them, whatever their strings (quotes, control characters, HTML,
// invalid UTF-8), numbers and times, with each part present or absent.
func FuzzEncodeEvent(f *testing.F) {
	f.Add("action_requested", "B1", "s-1", "q-1", "api.example.com", "/v1/<x>&\"y\"", int64(1796650000123456789), int64(48192), uint64(17), 201, uint8(0xff))
	f.Add("", "", "", "", "", "", int64(0), int64(0), uint64(0), 0, uint8(0))
	f.Add("session_approved", "\xff\xfe", "\u2028", "\x00", "é", "\t\n", int64(-62135596800000000), int64(-1), uint64(1<<63), -5, uint8(0x55))
	f.Fuzz(func(t *testing.T, typ, boot, sess, id, target, path string, nanos, pid int64, epoch uint64, status int, parts uint8) {
		at := time.Unix(0, nanos).In(time.FixedZone("", int(pid%50000)))
		e := Event{Type: EventType(typ), Time: at, BootID: boot, VaultEpoch: epoch, SessionID: sess, Reason: Reason(path)}
		if parts&1 != 0 {
			e.PreviousBootID, e.ApprovalID, e.ApprovedBy, e.Surface = id, target, path, typ
		}
		if parts&2 != 0 {
			e.Run = &RunBinding{RunID: id, PID: int(pid), StartTime: at.UTC(), Executable: path, ExecutableHash: target,
				Signer: boot, LaunchNonce: sess}
			if parts&16 != 0 {
				e.Run.ParentPID = status
			}
		}
		if parts&4 != 0 {
			e.Action = &Action{RequestID: id, Channel: typ, Operation: boot, Target: target}
			if parts&32 != 0 {
				e.Action.Path, e.Action.CredentialRef, e.Action.IdempotencyRef, e.Action.ArgumentsSHA256 = path, sess, id, target
			}
		}
		if parts&8 != 0 {
			e.Result = &Result{Class: ResultClass(target), Status: status, Bytes: pid, DurationMS: nanos}
		}
		if parts&64 != 0 {
			ok := parts&128 != 0
			e.Success = &ok
		}
		want, werr := json.Marshal(&e)
		got, gerr := encodeEvent(&e)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("hand-written:\n%s (%v)\nencoding/json:\n%s (%v)", got, gerr, want, werr)
		}
	})
}

// TestEncodeEventKnowsEveryField: each field of an event, and of the parts
// written by hand, set alone to a value that is not zero, comes out as
// encoding/json writes it: a field added to Event later is either written
// by hand or sends the event to encoding/json, never dropped.
func TestEncodeEventKnowsEveryField(t *testing.T) {
	base := func() Event {
		return Event{Type: EventActionResult, Time: time.Date(2026, 12, 7, 17, 0, 0, 5, time.UTC),
			Run: &RunBinding{}, Action: &Action{}, Result: &Result{}}
	}
	check := func(name string, e *Event) {
		t.Helper()
		want, werr := json.Marshal(e)
		got, gerr := encodeEvent(e)
		if werr != nil || gerr != nil || !bytes.Equal(got, want) {
			t.Errorf("%s set: hand-written\n%s (%v)\nencoding/json\n%s (%v)", name, got, gerr, want, werr)
		}
	}
	targets := []struct {
		name string
		of   func(*Event) reflect.Value
	}{
		{"Event", func(e *Event) reflect.Value { return reflect.ValueOf(e).Elem() }},
		{"RunBinding", func(e *Event) reflect.Value { return reflect.ValueOf(e.Run).Elem() }},
		{"Action", func(e *Event) reflect.Value { return reflect.ValueOf(e.Action).Elem() }},
		{"Result", func(e *Event) reflect.Value { return reflect.ValueOf(e.Result).Elem() }},
	}
	handPaths := 0
	for _, tg := range targets {
		n := tg.of(&Event{Run: &RunBinding{}, Action: &Action{}, Result: &Result{}}).NumField()
		for i := range n {
			e := base()
			v := tg.of(&e)
			f := v.Field(i)
			name := tg.name + "." + v.Type().Field(i).Name
			if !setNonZero(f) {
				t.Fatalf("%s: the test cannot set a %s; teach setNonZero", name, f.Type())
			}
			check(name, &e)
			if _, ok := appendEvent(nil, &e); ok {
				handPaths++
			}
		}
	}
	if handPaths < 25 {
		t.Errorf("only %d of the fields went the hand-written way; the fast path is not taken", handPaths)
	}
}

// setNonZero sets f to a value that is not its zero value.
func setNonZero(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.String:
		f.SetString("x<&>\"")
	case reflect.Int, reflect.Int64, reflect.Int32:
		f.SetInt(-7)
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		f.SetUint(7)
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if p.Elem().Kind() == reflect.Struct && p.Elem().NumField() > 0 {
			setNonZero(p.Elem().Field(0))
		} else if !setNonZero(p.Elem()) {
			return false
		}
		f.Set(p)
	case reflect.Struct:
		if f.Type() == reflect.TypeOf(time.Time{}) {
			f.Set(reflect.ValueOf(time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("", 3600))))
			return true
		}
		return f.NumField() > 0 && setNonZero(f.Field(0))
	case reflect.Slice:
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
	case reflect.Map:
		f.Set(reflect.MakeMap(f.Type()))
	default:
		return false
	}
	return true
}
