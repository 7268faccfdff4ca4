package journal

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzRecordAsMarshal: appendRecord writes exactly the bytes json.Marshal
// writes for the same entry, and they read back as the entry.
func FuzzRecordAsMarshal(f *testing.F) {
	f.Add("q-1", "scope", "key", "POST", "api.example.com:443", "/v1/<x>&\"y\"\u2028\n\t", "dispatched", "", "success", int64(12), int64(200), true, int64(1733500000123456789), int64(0))
	f.Add("\xff\x00", "é", "\\", "", "", "", "", "why\x7f", "", int64(-1), int64(0), false, int64(-62135596800000000), int64(253402300799999999))
	f.Fuzz(func(t *testing.T, id, scope, key, method, target, path, state, reason, class string, n, status int64, trunc bool, created, updated int64) {
		e := &Entry{
			Intent: Intent{ID: id, Scope: scope, Key: key, BootID: reason, RunID: class, Method: method, Target: target, Path: path,
				CredentialRef: state, RequestBytes: n, RequestSHA256: key + id},
			State: State(state), Reason: reason,
			Result:    Result{Status: int(status), Class: class, ResponseBytes: n * 3, ResponseSHA256: path, Truncated: trunc},
			CreatedAt: time.Unix(0, created).UTC(), UpdatedAt: time.Unix(0, updated).In(time.FixedZone("x", int(n%50000))),
		}
		want, werr := json.Marshal(logRecord{V: 1, Entry: e})
		got, gerr := frame(e)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("json says %v, frame says %v", werr, gerr)
		}
		if werr != nil {
			return
		}
		if !bytes.Equal(got[frameHeader:], want) {
			t.Fatalf("frame wrote\n %s\njson writes\n %s", got[frameHeader:], want)
		}
		var back logRecord
		if err := json.Unmarshal(got[frameHeader:], &back); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkFrame(b *testing.B) {
	e := &Entry{Intent: Intent{ID: "q-0123456789abcdef", Scope: "4f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0", Key: "yk-0123456789abcdef",
		BootID: "b-0123456789", RunID: "r-0123456789", Method: "POST", Target: "api.example.com:443", Path: "/v1/repos/yett/issues",
		CredentialRef: "cred_0123456789", RequestBytes: 1200, RequestSHA256: "4f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"},
		State: StateResult, Result: Result{Status: 201, Class: "success", ResponseBytes: 900, ResponseSHA256: "4f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"},
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			frame(e)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			frameFallback(e)
		}
	})
}
