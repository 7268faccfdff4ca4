//go:build unix

package gateway

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// echoAPI is a bound API that reflects the Authorization header it gets,
// as debug endpoints and chatty error bodies do: compressed when asked (or
// when it pleases), a slice of it when asked for a Range, and in other
// encodings of the same bytes.
type echoAPI struct{ addr string }

func startEchoAPI(t *testing.T) *echoAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(serveEcho)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &echoAPI{addr: ln.Addr().String()}
}

func serveEcho(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	secret := strings.TrimPrefix(auth, "Bearer ")
	body := []byte("you sent: " + auth)
	switch {
	case r.URL.Path == "/echo":
		if rg := r.Header.Get("Range"); rg != "" {
			servePartial(w, body, rg)
			return
		}
		for _, enc := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
			enc = strings.TrimSpace(strings.SplitN(enc, ";", 2)[0])
			if enc == "gzip" || enc == "br" || enc == "deflate" {
				w.Header().Set("Content-Encoding", enc)
				w.Write(encode(enc, body))
				return
			}
		}
		w.Write(body)
	case strings.HasPrefix(r.URL.Path, "/forced/"):
		// The server compresses whatever it was asked.
		enc := strings.TrimPrefix(r.URL.Path, "/forced/")
		out := body
		for _, e := range strings.Split(enc, ",") {
			out = encode(e, out)
		}
		w.Header().Set("Content-Encoding", strings.ReplaceAll(enc, ",", ", "))
		w.Write(out)
	case r.URL.Path == "/partial":
		// The server answers 206 with the slice named in the query.
		servePartial(w, body, "bytes="+r.URL.Query().Get("from")+"-"+r.URL.Query().Get("to"))
	case r.URL.Path == "/forms":
		fmt.Fprintf(w, "hex %s HEX %s json %s basic %s header-b64 %s url %s",
			hex.EncodeToString([]byte(secret)), strings.ToUpper(hex.EncodeToString([]byte(secret))),
			jsonEscapeAll(secret), base64.StdEncoding.EncodeToString([]byte("bot:"+secret)),
			base64.StdEncoding.EncodeToString([]byte(auth)), strings.ReplaceAll(secret, "-", "%2d"))
	default:
		w.Write([]byte("ok"))
	}
}

func servePartial(w http.ResponseWriter, body []byte, rg string) {
	a, b, _ := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
	from, _ := strconv.Atoi(a)
	to, err := strconv.Atoi(b)
	if err != nil || to >= len(body) {
		to = len(body) - 1
	}
	if from < 0 || from > to {
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		return
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(body)))
	w.WriteHeader(http.StatusPartialContent)
	w.Write(body[from : to+1])
}

func jsonEscapeAll(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	return b.String()
}

func encode(enc string, b []byte) []byte {
	var buf bytes.Buffer
	switch enc {
	case "gzip", "x-gzip":
		z := gzip.NewWriter(&buf)
		z.Write(b)
		z.Close()
	case "deflate":
		z := zlib.NewWriter(&buf)
		z.Write(b)
		z.Close()
	case "br":
		return brotliStored(b)
	default:
		return b
	}
	return buf.Bytes()
}

// brotliStored is a valid brotli stream (RFC 7932) holding b in one
// uncompressed meta-block: Go has no brotli encoder and the project takes
// no dependency for a test server. Bits, least significant first: WBITS 0
// (a 64 KiB window), ISLAST 0, MNIBBLES 0 (four nibbles), MLEN-1 in 16
// bits, ISUNCOMPRESSED 1, zero padding to the byte; the bytes; then an
// empty last meta-block (ISLAST 1, ISLASTEMPTY 1).
func brotliStored(b []byte) []byte {
	if len(b) == 0 || len(b) > 1<<16 {
		panic("brotliStored: 1..65536 bytes")
	}
	hdr := uint32(len(b)-1)<<4 | 1<<20
	var le [4]byte
	binary.LittleEndian.PutUint32(le[:], hdr)
	out := append([]byte{}, le[:3]...)
	out = append(out, b...)
	return append(out, 0x03)
}

// echoWorld is a world with a credential bound to an echo API, and an
// agent whose session is approved.
func echoWorld(t *testing.T) (*world, *echoAPI, *agent) {
	t.Helper()
	w := newWorld(t, worldOpts{})
	echo := startEchoAPI(t)
	if _, err := w.vault.Credentials().Add(vault.NewCredential{
		Name: "echo", Secret: vault.NewSecret([]byte(canary)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{echo.addr}, Approval: vault.ApprovalSession,
	}); err != nil {
		t.Fatal(err)
	}
	return w, echo, w.approvedAgent("echo")
}

func echoReq(echo *echoAPI, path string, headers map[string]string) map[string]any {
	return map[string]any{"method": "GET", "url": "http://" + echo.addr + path, "headers": headers}
}

// TestEncodedReflectionNeverReturnsSecret: an agent that asks a bound API
// for a compressed or partial answer, or a server that compresses on its
// own, never gets the credential back in any form the agent could decode.
func TestEncodedReflectionNeverReturnsSecret(t *testing.T) {
	w, echo, a := echoWorld(t)

	t.Run("agent asks for an encoding or a range", func(t *testing.T) {
		for _, h := range []map[string]string{
			{"Accept-Encoding": "gzip"}, {"Accept-Encoding": "br"}, {"Accept-Encoding": "deflate"},
			{"accept-encoding": "gzip;q=1.0, identity;q=0"}, {"Range": "bytes=0-5"}, {"range": "bytes=12-"},
			{"If-Range": `"x"`, "Range": "bytes=3-4"}, {"TE": "gzip"},
		} {
			r := a.call(agentapi.ToolHTTPRequest, echoReq(echo, "/echo", h))
			checkNoCanaryForm(t, r)
			mustContain(t, r, agentapi.CodeInvalid)
		}
	})
	t.Run("server compresses with what Yett asked for", func(t *testing.T) {
		for _, enc := range []string{"gzip", "x-gzip"} {
			r := a.call(agentapi.ToolHTTPRequest, echoReq(echo, "/forced/"+enc, nil))
			checkNoCanaryForm(t, r)
			mustContain(t, r, `"status":200`)
			mustContain(t, r, "[REDACTED]")
		}
	})
	t.Run("server compresses with what Yett did not ask for", func(t *testing.T) {
		for _, enc := range []string{"br", "deflate", "gzip,gzip", "compress"} {
			r := a.call(agentapi.ToolHTTPRequest, echoReq(echo, "/forced/"+enc, nil))
			checkNoCanaryForm(t, r)
			mustContain(t, r, agentapi.CodeResponseRefused+" "+agentapi.RefusedEncoded)
			if strings.Contains(r.Text, agentapi.CodeStatusUnknown) || strings.Contains(r.Text, "RETRY_SAFE") {
				t.Fatalf("a withheld answer reads as unknown or retry-safe: %s", r.Text)
			}
		}
	})
	t.Run("range walker", func(t *testing.T) {
		// Byte by byte, through a Range header and through a server that
		// answers 206 on its own: whatever comes back, put together, must
		// not hold the canary.
		var got bytes.Buffer
		for i := 0; i < len("you sent: Bearer ")+len(canary); i++ {
			r := a.call(agentapi.ToolHTTPRequest, echoReq(echo, "/echo", map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", i, i)}))
			got.Write(bodyOf(r))
			r = a.call(agentapi.ToolHTTPRequest, echoReq(echo, fmt.Sprintf("/partial?from=%d&to=%d", i, i), nil))
			got.Write(bodyOf(r))
			if i == 0 {
				mustContain(t, r, agentapi.CodeResponseRefused+" "+agentapi.RefusedPartial)
			}
		}
		if strings.Contains(got.String(), canary[:8]) {
			t.Fatalf("the range walker put the canary together: %q", got.String())
		}
	})
	t.Run("other forms of the same bytes", func(t *testing.T) {
		r := a.call(agentapi.ToolHTTPRequest, echoReq(echo, "/forms", nil))
		checkNoCanaryForm(t, r)
		mustContain(t, r, `"status":200`)
	})
	t.Run("withheld answers are recorded honestly", func(t *testing.T) {
		call := echoReq(echo, "/partial?from=0&to=3", nil)
		call["idempotency_key"] = "walk-recorded"
		mustContain(t, a.call(agentapi.ToolHTTPRequest, call), agentapi.CodeResponseRefused+" "+agentapi.RefusedPartial)
		st := a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "walk-recorded"})
		mustContain(t, st, "COMPLETED status=206")
	})
	a.kill()
	w.stop()
	checkAuditAndActivity(t, w, map[audit.Reason]bool{audit.Reason(agentapi.RefusedEncoded): true, audit.Reason(agentapi.RefusedPartial): true})
}

// bodyOf returns the body bytes of an http.request answer, decoded from
// base64 when that is how it came, or the whole text otherwise.
func bodyOf(r agentReply) []byte {
	var ans httpAnswer
	if json.Unmarshal([]byte(r.Text), &ans) != nil {
		return []byte(r.Text)
	}
	if ans.BodyBase64 != "" {
		b, _ := base64.StdEncoding.DecodeString(ans.BodyBase64)
		return b
	}
	return []byte(ans.Body)
}

// checkNoCanaryForm decodes what the agent got every way it could (gzip,
// zlib, raw deflate, base64) and looks for the canary in every form Yett
// promises to redact.
func checkNoCanaryForm(t *testing.T, r agentReply) {
	t.Helper()
	body := bodyOf(r)
	views := [][]byte{[]byte(r.Text + r.Err), body}
	if z, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
		b, _ := io.ReadAll(z)
		views = append(views, b)
	}
	if z, err := zlib.NewReader(bytes.NewReader(body)); err == nil {
		b, _ := io.ReadAll(z)
		views = append(views, b)
	}
	b, _ := io.ReadAll(flate.NewReader(bytes.NewReader(body)))
	views = append(views, b)
	for _, v := range views {
		if form := canaryForm(v); form != "" {
			t.Fatalf("the agent can read the canary (%s) in %q", form, r.Text)
		}
	}
}

// canaryForm names the form of the canary found in b, or "". Plain, hex
// and JSON-escaped forms are looked for in any letter case; base64 as is.
func canaryForm(b []byte) string {
	lower := strings.ToLower(string(b))
	for name, f := range map[string]string{"plain": canary, "hex": hex.EncodeToString([]byte(canary)), "json": jsonEscapeAll(canary)[:36]} {
		if strings.Contains(lower, strings.ToLower(f)) {
			return name
		}
	}
	for pad := 0; pad < 3; pad++ {
		// The base64 characters that depend on the canary alone, at each
		// alignment ("Bearer " and Basic's "user:" shift it).
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, pad), canary...))
		skip := []int{0, 2, 3}[pad]
		if bytes.Contains(b, []byte(enc[skip:skip+16])) {
			return fmt.Sprintf("base64 at offset %d", pad)
		}
	}
	return ""
}

// checkAuditAndActivity: the audit log and the Activity view projected from
// it (what the UI shows) hold no form of the canary, and each withheld
// answer is a result with its named reason, never an unknown outcome.
func checkAuditAndActivity(t *testing.T, w *world, wantReasons map[audit.Reason]bool) {
	t.Helper()
	var entries []audit.Entry
	seen := map[audit.Reason]bool{}
	for e, err := range audit.ReadEvents(filepath.Join(w.dataDir, AuditDir, audit.LogFile), w.identity) {
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
		js, _ := json.Marshal(e.Event)
		if form := canaryForm(js); form != "" {
			t.Fatalf("audit entry holds the canary (%s): %s", form, js)
		}
		if e.Event.Type == audit.EventActionResult {
			if e.Event.Result == nil || e.Event.Result.Class == audit.ResultTransport || e.Event.Result.Class == audit.ResultUnknown {
				if wantReasons[e.Event.Reason] {
					t.Fatalf("withheld answer audited as %+v", e.Event.Result)
				}
			}
			seen[e.Event.Reason] = true
		}
	}
	for r := range wantReasons {
		if !seen[r] {
			t.Errorf("no action_result with reason %s", r)
		}
	}
	ui, _ := json.Marshal(activity.Activity(entries, activity.Filter{}))
	if form := canaryForm(ui); form != "" {
		t.Fatalf("activity view holds the canary (%s)", form)
	}
}
