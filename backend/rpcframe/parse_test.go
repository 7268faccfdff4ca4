package rpcframe

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestParse(t *testing.T) {
	deep := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	tooDeep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	tests := []struct {
		name   string
		frame  string
		reason error  // nil: accepted
		reply  string // expected id in the reply ("" = no reply)
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, ""},
		{"request string id", `{"jsonrpc":"2.0","id":"a","method":"x","params":{}}`, nil, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, ""},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, nil, ""},
		{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}`, nil, ""},
		{"depth 64 in params", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}}`, nil, ""},
		{"brackets inside strings do not count", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"` + tooDeep + `"}}`, nil, ""},

		{"params null", `{"jsonrpc":"2.0","id":1,"method":"x","params":null}`, nil, ""},
		{"peer parse error report", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, ErrInvalidRequest, ""},
		{"malformed", `{"jsonrpc":"2.0","id":1,`, ErrMalformed, "null"},
		{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", ErrMalformed, "null"},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"x","params":` + deep + `}`, ErrTooDeep, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, ErrBatch, "null"},
		{"empty batch", `[]`, ErrBatch, "null"},
		{"string", `"hello"`, ErrNotObject, "null"},
		{"number", `42`, ErrNotObject, "null"},
		{"null", `null`, ErrNotObject, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"x"}`, ErrInvalidRequest, "5"},
		{"missing version", `{"id":"q","method":"x"}`, ErrInvalidRequest, `"q"`},
		{"wrong version notification", `{"jsonrpc":"1.0","method":"x"}`, ErrInvalidRequest, ""},
		{"bad params notification", `{"jsonrpc":"2.0","method":"x","params":3}`, ErrInvalidRequest, ""},
		{"bad params request", `{"jsonrpc":"2.0","id":2,"method":"x","params":3}`, ErrInvalidRequest, "2"},
		{"empty method", `{"jsonrpc":"2.0","id":2,"method":""}`, ErrInvalidRequest, "2"},
		{"method not string", `{"jsonrpc":"2.0","id":2,"method":5}`, ErrInvalidRequest, "2"},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"x"}`, ErrInvalidRequest, "null"},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"x"}`, ErrInvalidRequest, "null"},
		{"id fraction", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, ErrInvalidRequest, "null"},
		{"id huge", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}`, ErrInvalidRequest, "null"},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, ErrInvalidRequest, "null"},
		{"case-folded key", `{"jsonrpc":"2.0","ID":1,"method":"x"}`, ErrInvalidRequest, "null"},
		{"unknown key", `{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`, ErrInvalidRequest, "null"},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"x","result":1}`, ErrInvalidRequest, "1"},
		{"response with both", `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, ErrInvalidRequest, "1"},
		{"response bad error", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, ErrInvalidRequest, "1"},
		{"neither method nor id", `{"jsonrpc":"2.0"}`, ErrInvalidRequest, "null"},

		// Issue 19, item 3: a key twice anywhere in a frame. The SDK (Go's
		// encoding/json) keeps the last one, while a reader of the frame
		// sees the first: "yett.status" to a reviewer, http.request to the
		// gateway. The reply carries the id when the top level is sound.
		{"tool name twice", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"yett.status","name":"http.request","arguments":{}}}`, ErrInvalidRequest, "3"},
		{"tool name twice, escaped", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"yett.status","n\u0061me":"http.request"}}`, ErrInvalidRequest, "3"},
		{"tool name in two cases", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"yett.status","Name":"http.request"}}`, ErrInvalidRequest, "3"},
		{"tool name in capitals", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"yett.status","NAME":"x","arguments":{}}}`, ErrInvalidRequest, "3"},
		{"argument twice", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"http.request","arguments":{"url":"https://a/","url":"https://b/"}}}`, ErrInvalidRequest, "4"},
		{"key twice deep in a body", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"http.request","arguments":{"body":{"a":[{"k":1,"k":2}]}}}}`, ErrInvalidRequest, "5"},
		{"meta key twice", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"_meta":{"progressToken":1,"progressToken":2},"name":"x"}}`, ErrInvalidRequest, "6"},
		{"key twice in a notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}`, ErrInvalidRequest, ""},
		{"key twice in a result", `{"jsonrpc":"2.0","id":7,"result":{"a":1,"a":2}}`, ErrInvalidRequest, "7"},
		// Case matters inside a body: JSON keys are case-sensitive and a
		// target may use both spellings.
		{"two cases in a body", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"http.request","arguments":{"body":{"Content":1,"content":2}}}}`, nil, ""},
		{"same key in sibling objects", `{"jsonrpc":"2.0","id":9,"method":"x","params":{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}}`, nil, ""},
		{"key-like strings in values", `{"jsonrpc":"2.0","id":10,"method":"x","params":{"a":"a","b":["a","a"],"c":{"a":"a"}}}`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, rej := Parse([]byte(tt.frame), Limits{})
			if (msg == nil) == (rej == nil) {
				t.Fatalf("Parse returned msg=%v rej=%v; want exactly one", msg, rej)
			}
			if tt.reason == nil {
				if rej != nil {
					t.Fatalf("rejected: %v", rej.Reason)
				}
				roundTrip(t, tt.frame, msg)
				return
			}
			if rej == nil || !errors.Is(rej.Reason, tt.reason) {
				t.Fatalf("got %v, want rejection %v", rej, tt.reason)
			}
			if tt.reply == "" {
				if rej.Reply != nil {
					t.Fatalf("invalid notification got a reply: %s", rej.Reply)
				}
				return
			}
			checkReply(t, rej.Reply, tt.reply)
			if strings.Contains(string(rej.Reply), tt.frame) && len(tt.frame) > 8 {
				t.Errorf("reply echoes the frame: %s", rej.Reply)
			}
		})
	}
}

// roundTrip checks the message built from validated keys says what the frame
// said, by comparing with the SDK's own decoding.
func roundTrip(t *testing.T, frame string, msg jsonrpc.Message) {
	t.Helper()
	want, err := jsonrpc.DecodeMessage([]byte(frame))
	if err != nil {
		t.Fatalf("SDK cannot decode accepted frame: %v", err)
	}
	a, _ := jsonrpc.EncodeMessage(msg)
	b, _ := jsonrpc.EncodeMessage(want)
	if string(a) != string(b) {
		t.Errorf("built %s, SDK decodes %s", a, b)
	}
}

func checkReply(t *testing.T, reply []byte, wantID string) {
	t.Helper()
	if len(reply) == 0 || reply[len(reply)-1] != '\n' {
		t.Fatalf("reply not newline-terminated: %q", reply)
	}
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("reply is not JSON: %v", err)
	}
	if r.JSONRPC != "2.0" || r.Error == nil || r.Error.Message == "" {
		t.Fatalf("reply is not a JSON-RPC error: %s", reply)
	}
	if string(r.ID) != wantID {
		t.Errorf("reply id = %s, want %s", r.ID, wantID)
	}
}

// A message keeps nothing of the buffer it was parsed from: the Reader
// reuses its buffer for the next frame while the message is being served.
func TestParseKeepsNoAliasOfTheFrame(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"yett.status","arguments":{"k":"v"}}}`)
	msg, rej := Parse(frame, Limits{})
	if rej != nil {
		t.Fatal(rej.Reason)
	}
	want := string(msg.(*jsonrpc.Request).Params)
	for i := range frame {
		frame[i] = 'x'
	}
	if got := string(msg.(*jsonrpc.Request).Params); got != want {
		t.Fatalf("the message's params changed with the frame's bytes: %q", got)
	}
}
