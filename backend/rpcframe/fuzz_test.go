package rpcframe

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"m","data":[1]}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
	`{"jsonrpc":"2.0","id":1,"id":1,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","params":[[[[[[["\"]"]]]]]]]}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\u0000\"}",
	`{"a":` + strings.Repeat("{", 70),
	`"2.0"`,
	"",
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"yett.status","name":"http.request"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"body":{"a":{"b":1,"b":2}}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":{"k":1},"b":{"k\u0022":2,"k\"":3}}}`,
}

// decoderDuplicate is an independent judge of duplicateKey: it walks the
// frame with encoding/json's tokenizer and reports a key seen twice in one
// object at any depth.
func decoderDuplicate(frame []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(frame)))
	type level struct {
		object bool
		keys   map[string]bool
		atKey  bool
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := (*level)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.object {
					top.atKey = true
				}
				stack = append(stack, &level{object: true, keys: map[string]bool{}, atKey: true})
			case '[':
				if top != nil && top.object {
					top.atKey = true
				}
				stack = append(stack, &level{})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.atKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.atKey = false
				continue
			}
		}
		if top != nil && top.object {
			top.atKey = true
		}
	}
}

// FuzzParse checks Parse's contract on arbitrary frames: exactly one of a
// message or a rejection; replies are valid JSON-RPC errors whose id is
// null or the frame's id; accepted messages mean the same to the SDK.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		msg, rej := Parse(frame, Limits{MaxFrameBytes: 4096, MaxDepth: 8})
		if (msg == nil) == (rej == nil) {
			t.Fatalf("msg=%v rej=%v", msg, rej)
		}
		if rej != nil {
			if rej.Reason == nil {
				t.Fatal("rejection without reason")
			}
			if rej.Reply != nil {
				var r struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Error   *jsonrpc.Error  `json:"error"`
				}
				if err := json.Unmarshal(rej.Reply, &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil {
					t.Fatalf("bad reply %q: %v", rej.Reply, err)
				}
			}
			return
		}
		if depthExceeds(frame, 8) {
			t.Fatalf("accepted a frame deeper than the limit: %q", frame)
		}
		if decoderDuplicate(frame) {
			t.Fatalf("accepted a frame with a key twice in one object: %q", frame)
		}
		enc, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatalf("accepted message does not encode: %v", err)
		}
		sdk, err := jsonrpc.DecodeMessage(frame)
		if err != nil {
			t.Fatalf("accepted a frame the SDK rejects: %q: %v", frame, err)
		}
		enc2, _ := jsonrpc.EncodeMessage(sdk)
		if string(enc) != string(enc2) {
			t.Fatalf("policy point and SDK disagree on %q:\n%s\n%s", frame, enc, enc2)
		}
	})
}

// FuzzReader feeds an arbitrary stream followed by a known good frame and
// checks the reader never fails and always recovers to deliver it.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s + "\n" + s + "\r\n"))
	}
	f.Add([]byte(strings.Repeat("x", 300)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		const marker = `{"jsonrpc":"2.0","id":424242,"method":"marker"}`
		src := string(stream) + "\n" + marker + "\n"
		r := NewReader(strings.NewReader(src), Limits{MaxFrameBytes: 256, MaxDepth: 8})
		last := ""
		for i := 0; ; i++ {
			if i > len(src)+2 {
				t.Fatal("reader produced more frames than lines")
			}
			msg, rej, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			if cap(r.buf) > 256+2 {
				t.Fatalf("buffer grew to %d", cap(r.buf))
			}
			if (msg == nil) == (rej == nil) {
				t.Fatalf("msg=%v rej=%v", msg, rej)
			}
			last = ""
			if req, ok := msg.(*jsonrpc.Request); ok {
				last = req.Method
			}
		}
		if last != "marker" {
			t.Fatalf("good frame after the fuzz input was not delivered last (got %q)", last)
		}
	})
}
