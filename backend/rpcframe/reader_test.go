package rpcframe

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestReaderStaysUsable sends every kind of bad frame between good ones and
// checks each good one still comes out, in order.
func TestReaderStaysUsable(t *testing.T) {
	lim := Limits{MaxFrameBytes: 1024}
	stream := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"a"}`,
		`[{"jsonrpc":"2.0","id":2,"method":"b"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"c","params":{"x":"` + strings.Repeat("A", 4096) + `"}}`,
		`not json at all`,
		``,
		`   `,
		`{"jsonrpc":"2.0","method":"bad","params":1}`,
		`{"jsonrpc":"2.0","id":4,"method":"d"}` + "\r",
		`{"jsonrpc":"2.0","id":5,"method":"e"}`, // unterminated last line
	}, "\n")
	r := NewReader(strings.NewReader(stream), lim)
	var got []string
	for {
		msg, rej, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		switch {
		case msg != nil:
			got = append(got, "ok:"+msg.(*jsonrpc.Request).Method)
		case rej.Reply == nil:
			got = append(got, "dropped")
		default:
			got = append(got, "rejected:"+errors.Unwrap(rej.Reason).Error())
		}
	}
	want := []string{
		"ok:a",
		"rejected:" + ErrBatch.Error(),
		"rejected:" + ErrFrameTooLarge.Error(),
		"rejected:" + ErrMalformed.Error(),
		"dropped",
		"ok:d",
		"ok:e",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// countingReader produces n bytes of 'A' then a newline and a good frame,
// without ever holding them: it proves the reader does not buffer an
// oversize frame whole.
type countingReader struct {
	left int
	tail *strings.Reader
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.left > 0 {
		n := min(len(p), c.left)
		for i := range n {
			p[i] = 'A'
		}
		c.left -= n
		return n, nil
	}
	return c.tail.Read(p)
}

func TestOversizeFrameIsDiscardedNotBuffered(t *testing.T) {
	const huge = 64 << 20 // 64 MiB, 8x the default limit
	src := &countingReader{left: huge, tail: strings.NewReader("\n" + `{"jsonrpc":"2.0","id":9,"method":"after"}` + "\n")}
	r := NewReader(src, Limits{})
	_, rej, err := r.Next()
	if err != nil || rej == nil || !errors.Is(rej.Reason, ErrFrameTooLarge) {
		t.Fatalf("got rej=%v err=%v, want ErrFrameTooLarge", rej, err)
	}
	checkReply(t, rej.Reply, "null")
	if c := cap(r.buf); c > DefaultMaxFrameBytes+2 {
		t.Errorf("reader kept a %d-byte buffer for a %d-byte frame", c, huge)
	}
	msg, rej, err := r.Next()
	if err != nil || rej != nil || msg.(*jsonrpc.Request).Method != "after" {
		t.Fatalf("next frame: msg=%v rej=%v err=%v", msg, rej, err)
	}
}

func TestFrameAtLimitAccepted(t *testing.T) {
	head := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"`
	tail := `"}}`
	limit := 256
	frame := head + strings.Repeat("b", limit-len(head)-len(tail)) + tail
	r := NewReader(bytes.NewReader([]byte(frame+"\r\n"+frame+"x\n")), Limits{MaxFrameBytes: limit})
	if msg, rej, err := r.Next(); err != nil || rej != nil || msg == nil {
		t.Fatalf("frame of exactly the limit: rej=%v err=%v", rej, err)
	}
	if _, rej, err := r.Next(); err != nil || rej == nil || !errors.Is(rej.Reason, ErrFrameTooLarge) {
		t.Fatalf("frame one byte over: rej=%v err=%v", rej, err)
	}
}

// A connection that sent one large frame does not keep a buffer of its
// size once a small frame follows.
func TestReaderLetsALargeFrameGo(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`
	r := NewReader(strings.NewReader(big+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"), Limits{MaxFrameBytes: 2 << 20})
	for i := 0; i < 2; i++ {
		if msg, rej, err := r.Next(); err != nil || rej != nil || msg == nil {
			t.Fatalf("frame %d: %v %v", i, rej, err)
		}
	}
	if cap(r.buf) > keptBuffer {
		t.Fatalf("after a small frame the reader still holds %d bytes", cap(r.buf))
	}
}
