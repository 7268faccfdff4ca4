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
