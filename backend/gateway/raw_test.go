//go:build unix

package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rawShim is `yett mcp` driven byte by byte by the test process (which is
// then the origin the gateway inspects), for the message shapes an SDK
// client never sends: notifications carrying work, batches.
type rawShim struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startRawShim(t testing.TB, runDir string) *rawShim {
	t.Helper()
	cmd := exec.Command(yettBin, "mcp")
	cmd.Env = append(os.Environ(), "YETT_RUNTIME_DIR="+runDir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &rawShim{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	return s
}

func (s *rawShim) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next returns the next line that is not a list_changed notification.
func (s *rawShim) next() map[string]json.RawMessage {
	s.t.Helper()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatal("shim closed stdout")
			}
			if strings.Contains(l, "notifications/tools/list_changed") {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				s.t.Fatalf("line %q: %v", l, err)
			}
			return m
		case <-time.After(testWait):
			s.t.Fatal("no reply from the shim")
		}
	}
}

// quiet asserts that nothing but list_changed notifications is written
// for d.
func (s *rawShim) quiet(d time.Duration) {
	s.t.Helper()
	end := time.After(d)
	for {
		select {
		case l := <-s.lines:
			if !strings.Contains(l, "notifications/tools/list_changed") {
				s.t.Fatalf("unexpected output to the agent: %q", l)
			}
		case <-end:
			return
		}
	}
}

func (s *rawShim) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if r := s.next(); string(r["id"]) != "1" || r["result"] == nil {
		s.t.Fatalf("initialize: %v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func callLine(id any, w *world, marker string) string {
	args, _ := json.Marshal(w.req(marker))
	idPart := ""
	if id != nil {
		idPart = fmt.Sprintf(`"id":%v,`, id)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0",%s"method":"tools/call","params":{"name":"http.request","arguments":%s}}`, idPart, args)
}

// 5. A notification (no id) carrying a marker while the vault is locked:
// the marker never arrives and nothing is written to the agent's stdout.
func TestReleaseLockedNotification(t *testing.T) {
	w := newWorld(t, worldOpts{})
	s := startRawShim(t, w.runDir)
	s.initialize()
	w.lock()
	marker := tag("notification")
	s.send(callLine(nil, w, marker))
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/%s","params":{"x":1}}`, marker))
	s.quiet(500 * time.Millisecond)
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("a notification raised a card: %+v", p)
	}
	w.unlock()
	w.settleAbsent(marker)
	s.quiet(200 * time.Millisecond)
	if p := w.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("card after unlock: %+v", p)
	}
	// The same notification while unlocked does not run either: work
	// needs a request the agent gets an answer to.
	s.send(callLine(nil, w, marker))
	s.quiet(300 * time.Millisecond)
	if n := w.recv.count(t, marker); n != 0 {
		t.Fatalf("marker arrived %d times", n)
	}
	// The connection is still usable.
	s.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	if r := s.next(); string(r["id"]) != "9" || r["result"] == nil {
		t.Fatalf("tools/list: %v", r)
	}
}

// 6. A JSON-RPC batch is answered with a JSON-RPC error, nothing in it is
// executed, and the connection stays usable.
func TestReleaseBatchRejected(t *testing.T) {
	w := newWorld(t, worldOpts{})
	s := startRawShim(t, w.runDir)
	s.initialize()
	before := tag("before-batch")
	s.send(callLine(2, w, before))
	w.approveNext()
	if r := s.next(); string(r["id"]) != "2" || !strings.Contains(string(r["result"]), `\"status\":200`) {
		t.Fatalf("approved call: %v", r)
	}
	inBatch := tag("batch")
	s.send("[" + callLine(3, w, inBatch) + "," + callLine(4, w, inBatch) + "]")
	r := s.next()
	var e struct {
		Code int `json:"code"`
	}
	json.Unmarshal(r["error"], &e)
	if string(r["id"]) != "null" || e.Code != -32600 {
		t.Fatalf("batch reply %v", r)
	}
	after := tag("after-batch")
	s.send(callLine(5, w, after))
	if r := s.next(); string(r["id"]) != "5" || !strings.Contains(string(r["result"]), `\"status\":200`) {
		t.Fatalf("call after batch: %v", r)
	}
	w.settleAbsent(inBatch)
	if w.recv.count(t, before) != 1 || w.recv.count(t, after) != 1 {
		t.Fatal("wrong arrival counts")
	}
}

func newShimCmd(runDir string) *exec.Cmd {
	cmd := exec.Command(yettBin, "mcp")
	cmd.Env = append(os.Environ(), "YETT_RUNTIME_DIR="+runDir)
	return cmd
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// Issue 19, item 3: a key given twice anywhere in a frame, through the real
// shim, from an approved run. The SDK keeps the last of two keys, a reader
// of the frame sees the first: each is answered with its own id as an
// invalid request, nothing reaches the receiver, and the connection stays
// usable.
func TestDuplicateKeysRefusedAtEveryDepth(t *testing.T) {
	w := newWorld(t, worldOpts{})
	s := startRawShim(t, w.runDir)
	s.initialize()
	s.send(callLine(2, w, tag("approved")))
	w.approveNext()
	if r := s.next(); string(r["id"]) != "2" || !strings.Contains(string(r["result"]), `\"status\":200`) {
		t.Fatalf("approved call: %v", r)
	}
	marker := tag("twice")
	args, _ := json.Marshal(w.req(marker))
	req := strings.TrimSuffix(string(args), "}")
	frames := []string{
		// a status query to a reader, an HTTP request to the SDK
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"yett.status","name":"http.request","arguments":` + string(args) + `}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"yett.status","n\u0061me":"http.request","arguments":` + string(args) + `}}`,
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"yett.status","Name":"http.request","arguments":` + string(args) + `}}`,
		`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"http.request","arguments":` + req + `,"method":"DELETE","method":"POST"}}}`,
		`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"http.request","arguments":` + req + `,"body":{"x":{"k":1,"k":2}}}}}`,
		`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"_meta":{"a":1,"a":2},"name":"http.request","arguments":` + string(args) + `}}`,
	}
	for i, f := range frames {
		s.send(f)
		r := s.next()
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(r["error"], &e)
		if string(r["id"]) != fmt.Sprint(10+i) || e.Code != -32600 || !strings.Contains(e.Message, "twice") {
			t.Fatalf("frame %d answered %v", i, r)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":20,"method":"tools/list"}`)
	if r := s.next(); string(r["id"]) != "20" || r["result"] == nil {
		t.Fatalf("tools/list after the refusals: %v", r)
	}
	w.settleAbsent(marker)
}

// Issue 19, item 4: an oversized frame is answered with its id whenever the
// id is plain, wherever it stands: first (the Go SDK's order), last (the
// TypeScript SDK writes method, params, jsonrpc, id), or first with more
// keys after it. Through the real shim, 9 MiB frames over the 8 MiB cap.
func TestOversizedFramesAnswerTheirID(t *testing.T) {
	w := newWorld(t, worldOpts{})
	s := startRawShim(t, w.runDir)
	s.initialize()
	body := strings.Repeat("y", 9<<20)
	frames := map[string]string{
		"41":     `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"http.request","arguments":{"body":"` + body + `"}}}`,
		`"ts-1"`: `{"method":"tools/call","params":{"name":"http.request","arguments":{"body":"` + body + `"}},"jsonrpc":"2.0","id":"ts-1"}`,
		"43":     `{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"arguments":{"body":"` + body + `"}},"id":44,"\u0069d":45}`,
	}
	for want, f := range frames {
		s.send(f)
		r := s.next()
		if string(r["id"]) != want || !strings.Contains(string(r["error"]), "size limit") {
			t.Fatalf("oversized frame answered %s, want id %s", r["id"], want)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":50,"method":"tools/list"}`)
	if r := s.next(); string(r["id"]) != "50" {
		t.Fatalf("tools/list after the oversized frames: %v", r)
	}
}
