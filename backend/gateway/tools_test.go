package gateway

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the tool schema golden files")

// TestToolSchemasGolden pins what agents see: an accidental change to a
// tool's name, description or schema fails here.
func TestToolSchemasGolden(t *testing.T) {
	for _, tool := range []*mcp.Tool{httpGetTool(), httpRequestTool(), statusTool(), sshExecTool()} {
		t.Run(tool.Name, func(t *testing.T) {
			got, err := json.MarshalIndent(tool, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			json.Indent(&pretty, got, "", "  ")
			pretty.WriteByte('\n')
			path := filepath.Join("testdata", tool.Name+".golden.json")
			if *update {
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Fatalf("schema of %s changed; if intended, run go test -run TestToolSchemasGolden -update\ngot:\n%s", tool.Name, pretty.String())
			}
		})
	}
}

func TestParseHTTPArgs(t *testing.T) {
	ok := func(s string) string { return s }
	tests := []struct {
		name, args, wantErr string
	}{
		{"minimal", `{"method":"get","url":"https://api.example.com/x"}`, ""},
		{"json body", `{"method":"POST","url":"https://a.example/x","body":{"a":1},"idempotency_key":"k-1:2.3_4"}`, ""},
		{"unknown field", `{"method":"GET","url":"https://a.example","credential":"x"}`, "documented fields"},
		{"trailing data", `{"method":"GET","url":"https://a.example"} {}`, "single JSON object"},
		{"bad method", `{"method":"TRACE","url":"https://a.example"}`, "method must be"},
		{"relative url", `{"method":"GET","url":"/x"}`, "absolute"},
		{"ftp", `{"method":"GET","url":"ftp://a.example/x"}`, "absolute"},
		{"userinfo", `{"method":"GET","url":"https://u:CANARY@a.example/"}`, "user information"},
		{"fragment", `{"method":"GET","url":"https://a.example/#f"}`, "fragment"},
		{"authorization", `{"method":"GET","url":"https://a.example","headers":{"authorization":"Bearer x"}}`, "set by Yett"},
		{"cookie", `{"method":"GET","url":"https://a.example","headers":{"Cookie":"a=b"}}`, "set by Yett"},
		{"crlf", `{"method":"GET","url":"https://a.example","headers":{"X-A":"a\r\nHost: b"}}`, "invalid header"},
		{"bad key", `{"method":"GET","url":"https://a.example","idempotency_key":"a b"}`, "only letters"},
		{"array args", `[1]`, "documented fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseHTTPArgs(json.RawMessage(ok(tt.args)))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(publicArgError(err), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(publicArgError(err), "CANARY") {
				t.Fatal("error echoes input")
			}
		})
	}
}

// FuzzParseHTTPArgs: untrusted tool arguments never panic, and every error
// is the chosen kind whose text never echoes the input.
func FuzzParseHTTPArgs(f *testing.F) {
	for _, s := range []string{
		`{"method":"GET","url":"https://api.example.com/x"}`,
		`{"method":"POST","url":"http://127.0.0.1:1/x","params":{"a":"b"},"headers":{"X-A":"b"},"body":"s","idempotency_key":"k"}`,
		`{"method":"POST","url":"http://[::1]:1/x","body":{"deep":[1,2,{"a":null}]}}`,
		`{"url":"https://u@h/#x"}`, `null`, `"x"`, `{}`, `{"headers":{"":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// http.get reads the same fields less the body, and sends only GET
		// or HEAD.
		if get, err := parseHTTPGetArgs(json.RawMessage(b)); err == nil &&
			(get.req.Method != "GET" && get.req.Method != "HEAD" || get.req.Body != nil || get.host == "") {
			t.Fatalf("http.get accepted %+v", get)
		} else if ae := (*errArgs)(nil); err != nil && !errorsAs(err, &ae) {
			t.Fatalf("http.get: unexpected error kind %T", err)
		}
		call, err := parseHTTPArgs(json.RawMessage(b))
		if err != nil {
			var ae *errArgs
			if !errorsAs(err, &ae) {
				t.Fatalf("unexpected error kind %T", err)
			}
			return
		}
		if call.host == "" || !allowedMethods[call.req.Method] {
			t.Fatalf("accepted %+v", call)
		}
		for k := range call.req.Headers {
			if reservedHeaders[strings.ToLower(k)] {
				t.Fatalf("reserved header %q accepted", k)
			}
		}
	})
}

func FuzzParseStatusArgs(f *testing.F) {
	for _, s := range []string{`{"idempotency_key":"k-1"}`, `{}`, `{"idempotency_key":""}`, `{"idempotency_key":"a\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		key, err := parseStatusArgs(json.RawMessage(b))
		if err == nil {
			if _, err := checkKey(key, false); err != nil {
				t.Fatalf("accepted invalid key")
			}
		}
	})
}

func errorsAs(err error, target **errArgs) bool {
	e, ok := err.(*errArgs)
	if ok {
		*target = e
	}
	return ok
}
