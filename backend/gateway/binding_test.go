//go:build unix

package gateway

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/vault"
)

// pathAPI records, for every arrival that carries a credential, the path
// a lenient server would resolve it to: percent-decoded (twice, as some
// stacks do), backslashes as slashes, ";params" dropped, dot segments
// removed.
type pathAPI struct {
	addr     string
	mu       sync.Mutex
	resolved []string
}

func startPathAPI(t *testing.T) *pathAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pathAPI{addr: ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			p.mu.Lock()
			p.resolved = append(p.resolved, lenientPath(r.RequestURI))
			p.mu.Unlock()
		}
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

func lenientPath(requestURI string) string {
	p, _, _ := strings.Cut(requestURI, "?")
	for range 2 {
		if d, err := url.PathUnescape(p); err == nil {
			p = d
		}
	}
	p = strings.ReplaceAll(p, `\`, "/")
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return path.Clean(strings.Join(segs, "/"))
}

func (p *pathAPI) arrivals() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.resolved...)
}

// TestBindingPathMeansWhatItSays: a credential bound to /allowed never
// reaches a path a server resolves outside /allowed, however the agent
// spells it (dot segments raw, percent-encoded, double-encoded, behind
// ";", between encoded or raw backslashes and slashes).
func TestBindingPathMeansWhatItSays(t *testing.T) {
	w := newWorld(t, worldOpts{})
	api := startPathAPI(t)
	if _, err := w.vault.Credentials().Add(vault.NewCredential{
		Name: "allowed-only", Secret: vault.NewSecret([]byte(canary)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{api.addr}, PathPrefixes: []string{"/allowed"}, Approval: vault.ApprovalSession,
	}); err != nil {
		t.Fatal(err)
	}
	a := w.approvedAgent("bind")
	for _, p := range []string{
		"/allowed/../admin/delete", "/allowed/%2e%2e/admin2", "/allowed/%2E%2E/admin3", "/allowed/.%2e/admin4",
		"/allowed/%2e./admin5", "/allowed/..;/admin6", "/allowed/..%3b/admin7", "/allowed%2f..%2fadmin8",
		"/allowed/..%2fadmin9", "/allowed/..%5cadmin10", `/allowed/..\admin11`, "/allowed/%252e%252e/admin12",
		"/allowed/x/../../admin13", "/allowed/./../admin14", "/allowed/%2e%2e%2f%2e%2e%2fadmin15",
	} {
		t.Run(p, func(t *testing.T) {
			r := a.call(agentapi.ToolHTTPRequest, map[string]any{"method": "GET", "url": "http://" + api.addr + p})
			mustContain(t, r, agentapi.CodeInvalid)
		})
	}
	mustContain(t, a.call(agentapi.ToolHTTPRequest, map[string]any{"method": "GET", "url": "http://" + api.addr + "/allowed/items/1"}), `"status":200`)
	got := api.arrivals()
	for _, p := range got {
		if p != "/allowed" && !strings.HasPrefix(p, "/allowed/") {
			t.Errorf("the credential reached %s", p)
		}
	}
	if len(got) != 1 {
		t.Errorf("arrivals %v, want only /allowed/items/1", got)
	}
}

// TestTargetRefusedBeforeAnyCard: the URL's host and port are read by one
// parser for the binding and the executor alike, so a target the executor
// would refuse is INVALID_REQUEST at once: no card, nothing sent.
func TestTargetRefusedBeforeAnyCard(t *testing.T) {
	w := newWorld(t, worldOpts{timeout: 2 * time.Second})
	a := startAgent(t, w.runDir)
	a.connect()
	host, port, _ := net.SplitHostPort(w.recv.addr)
	for _, u := range []string{
		"http://" + host + ".:" + port + "/x", // trailing dot
		"http://" + host + ":65536/x",
		"http://" + host + ":0" + port + "/x", // leading zero
		"http://" + host + ":/x",              // empty port
		"http://127.1:" + port + "/x",         // inet_aton shorthand
		"http://0x7f.0.0.1:" + port + "/x",
		"http://2130706433:" + port + "/x",
		"http://[::ffff:127.0.0.1%25lo]:" + port + "/x",
	} {
		t.Run(u, func(t *testing.T) {
			r := a.call(agentapi.ToolHTTPRequest, map[string]any{"method": "GET", "url": u})
			mustContain(t, r, agentapi.CodeInvalid)
			if p := w.gw.Broker().Pending(); len(p) != 0 {
				t.Fatalf("a card was shown: %+v", p)
			}
		})
	}
	if lines := w.recv.lines(t); len(lines) != 0 {
		t.Fatalf("the receiver saw %v", lines)
	}
}

// TestToolArgumentsOneSpelling: a key given twice, or in another letter
// case, is refused: the decoder would keep one of them silently, and the
// person approved one meaning.
func TestToolArgumentsOneSpelling(t *testing.T) {
	// A key given twice, exactly, is refused for the whole frame before any
	// tool sees it (backend/rpcframe: at any depth, issue 19); the other
	// spellings are refused by the tool's own argument reader.
	refusedSpelling := func(name string) string {
		if strings.HasSuffix(name, " twice") {
			return "a key is given twice"
		}
		return agentapi.CodeInvalid
	}
	w := newWorld(t, worldOpts{})
	a := w.approvedAgent("spell")
	u := "http://" + w.recv.addr + "/replay-test/"
	for name, raw := range map[string]string{
		"url twice":              `{"method":"GET","url":"` + u + `dup-a","url":"` + u + `dup-b"}`,
		"url and URL":            `{"method":"GET","url":"` + u + `dup-c","URL":"` + u + `dup-d"}`,
		"Url alone":              `{"method":"GET","Url":"` + u + `dup-e"}`,
		"method twice":           `{"method":"GET","method":"DELETE","url":"` + u + `dup-f"}`,
		"kelvin sign key":        `{"method":"GET","url":"` + u + `dup-g","idempotency_\u212aey":"k-dup-g"}`,
		"header twice":           `{"method":"GET","url":"` + u + `dup-h","headers":{"X-Replay-Test-Id":"dup-h","X-Replay-Test-Id":"dup-i"}}`,
		"header in two cases":    `{"method":"GET","url":"` + u + `dup-j","headers":{"X-Replay-Test-Id":"dup-j","x-replay-test-id":"dup-k"}}`,
		"param twice":            `{"method":"GET","url":"` + u + `dup-l","params":{"q":"dup-l","q":"dup-m"}}`,
		"param in two cases":     `{"method":"GET","url":"` + u + `dup-n","params":{"q":"dup-n","Q":"dup-o"}}`,
		"nested object in param": `{"method":"GET","url":"` + u + `dup-p","params":{"q":{"a":1}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := a.do(agentCmd{Op: "call", Tool: agentapi.ToolHTTPRequest, Args: json.RawMessage(raw)})
			mustContain(t, r, refusedSpelling(name))
		})
	}
	for name, raw := range map[string]string{
		"key twice": `{"idempotency_key":"key-spell","idempotency_key":"other"}`,
		"KEY":       `{"IDEMPOTENCY_KEY":"key-spell"}`,
	} {
		t.Run("status "+name, func(t *testing.T) {
			r := a.do(agentCmd{Op: "call", Tool: agentapi.ToolStatus, Args: json.RawMessage(raw)})
			mustContain(t, r, refusedSpelling(name))
		})
	}
	if n := w.recv.count(t, "dup-"); n != 0 {
		t.Fatalf("%d refused calls reached the receiver", n)
	}
}
