//go:build unix

package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
)

// canary is the test credential. It must reach the receiver (hashed there)
// and nothing else: not the agent, not logs, not the journal or audit files.
const canary = "CANARY-gw-7f3e9a1c5b"

const passphrase = "correct horse battery staple"

// receiver is the controlled receiver of seed 004: a loopback HTTP server
// appending one JSON line per arrival, synced before it answers.
type receiver struct {
	addr string
	path string
	mu   sync.Mutex
	f    *os.File
	// hold, when set, is called after the arrival is logged and before the
	// answer (test 11 kills the gateway meanwhile).
	hold func(id string)
	srv  *http.Server
}

func startReceiver(t testing.TB) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{addr: ln.Addr().String(), path: filepath.Join(t.TempDir(), "receiver-events.jsonl")}
	if r.f, err = os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		t.Fatal(err)
	}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go r.srv.Serve(ln)
	t.Cleanup(func() { r.srv.Close(); r.f.Close() })
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	marker := ""
	if a := req.Header.Get("Authorization"); a != "" {
		s := sha256.Sum256([]byte(a))
		marker = hex.EncodeToString(s[:])[:12]
	}
	id := req.Header.Get("X-Replay-Test-Id")
	line, _ := json.Marshal(map[string]any{
		"received_at": time.Now().UTC(), "method": req.Method, "path": req.URL.Path,
		"request_id": id, "auth_marker": marker, "idempotency_key": req.Header.Get("Idempotency-Key"), "body": string(body),
	})
	r.mu.Lock()
	r.f.Write(append(line, '\n'))
	r.f.Sync()
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		hold(id)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"received":true}`))
}

// count returns how many arrivals carry marker anywhere in their line.
func (r *receiver) count(t testing.TB, marker string) int {
	t.Helper()
	b, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if bytes.Contains(line, []byte(marker)) {
			n++
		}
	}
	return n
}

// authMarkers returns the auth markers seen, to prove a credential arrived.
func (r *receiver) lines(t testing.TB) []map[string]any {
	b, _ := os.ReadFile(r.path)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		json.Unmarshal(sc.Bytes(), &m)
		out = append(out, m)
	}
	return out
}

// world is one test's gateway, vault, receiver and directories.
type world struct {
	t        testing.TB
	dataDir  string
	runDir   string
	vaultDir string
	vault    *vault.Vault
	recv     *receiver
	identity *age.X25519Identity
	gw       *Gateway
	logs     *bytes.Buffer
	logMu    *sync.Mutex
	serveErr chan error
	timeout  time.Duration
	progress time.Duration
	// resultDelay is the stores' ResultDelay (worldOpts).
	resultDelay time.Duration
	audit       *audit.Log
	oauth       *oauth.Custody
	ops         *operation.Catalogue
	// ssh and recordings configure SSH commands (ssh_test.go).
	ssh        sshaction.Config
	recordings Recordings
	// upstream runs the upstream MCP servers of the vault (upstream_test.go).
	upstream *upstream.Manager
}

type worldOpts struct {
	perCall bool
	// approval, when set, is the receiver credential's approval mode
	// (perCall is vault.ApprovalPerCall).
	approval vault.Approval
	timeout  time.Duration
	// progressEvery is how often a waiting call hears of its card.
	progressEvery time.Duration
	// oauth opens an OAuth manager and the operation catalogue on the data
	// directory; oauthHTTP, when set, is its client to providers.
	oauth     bool
	oauthHTTP *http.Client
	// ssh and recordings configure SSH commands (ssh_test.go).
	ssh        sshaction.Config
	recordings Recordings
	// upstream runs the vault's upstream MCP servers, their results cut
	// at upstreamCap (0: the default).
	upstream    bool
	upstreamCap int
	// resultDelay holds outcomes (both stores' ResultDelay) and turns the
	// audit log's signing by time off, so that only a call's intent makes
	// an fsync (onefsync_test.go).
	resultDelay time.Duration
}

func newWorld(t testing.TB, o worldOpts) *world {
	t.Helper()
	base, err := os.MkdirTemp("", "ygw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &world{t: t, dataDir: filepath.Join(base, "data"), runDir: filepath.Join(base, "run"), vaultDir: filepath.Join(base, "vault"),
		logs: &bytes.Buffer{}, logMu: &sync.Mutex{}, timeout: o.timeout, progress: o.progressEvery, ssh: o.ssh, recordings: o.recordings, resultDelay: o.resultDelay}
	if w.timeout == 0 {
		w.timeout = testWait
	}
	os.MkdirAll(w.vaultDir, 0o700)
	w.recv = startReceiver(t)
	w.vault, err = vault.Open(w.vaultDir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.vault.Close() })
	if err := w.vault.Create(vault.Passphrase(passphrase), false); err != nil {
		t.Fatal(err)
	}
	appr := vault.ApprovalSession
	if o.perCall {
		appr = vault.ApprovalPerCall
	}
	if o.approval != "" {
		appr = o.approval
	}
	if _, err := w.vault.Credentials().Add(vault.NewCredential{
		Name: "receiver", Secret: vault.NewSecret([]byte(canary)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{w.recv.addr}, Approval: appr,
	}); err != nil {
		t.Fatal(err)
	}
	if w.identity, err = age.GenerateX25519Identity(); err != nil {
		t.Fatal(err)
	}
	// The test owns the audit log, as the keeper does in the product: it
	// can break it, and it closes it after the gateway.
	aopts := audit.Options{Dir: filepath.Join(w.dataDir, AuditDir), Recipient: w.identity.Recipient(), Carried: CarriedAudit(w.dataDir)}
	if o.resultDelay > 0 {
		aopts.ResultDelay, aopts.CheckpointAfter = o.resultDelay, -1
	}
	if w.audit, _, err = audit.Open(aopts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.audit.Close() })
	if o.oauth {
		if w.oauth, err = oauth.Open(oauth.Config{DataDir: w.dataDir, Vault: w.vault, Audit: w.audit, RefreshMargin: 300 * time.Millisecond, HTTPClient: o.oauthHTTP,
			Logger: slog.New(slog.NewTextHandler(lockedWriter{w.logMu, w.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.oauth.Close() })
		if w.ops, err = operation.Open(operation.Config{DataDir: w.dataDir, Authorizations: w.oauth}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.ops.Close() })
	}
	if o.upstream {
		ucfg := upstream.Config{Vault: w.vault, Dial: action.New(action.Config{}).GuardedDial, MaxResultBytes: o.upstreamCap,
			Logger: slog.New(slog.NewTextHandler(lockedWriter{w.logMu, w.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		if w.oauth != nil {
			ucfg.Authorizations = upstream.Custody(w.oauth)
		}
		w.upstream = upstream.New(ucfg)
		w.upstream.Start()
		t.Cleanup(w.upstream.Close)
	}
	w.start()
	t.Cleanup(w.checkNoLeak)
	return w
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// start starts an in-process gateway (again, after stop: a restart).
func (w *world) start() {
	w.t.Helper()
	cfg := Config{
		Vault: w.vault, DataDir: w.dataDir, RuntimeDir: w.runDir, Audit: w.audit,
		ApprovalTimeout: w.timeout, ProgressEvery: w.progress, ResultDelay: w.resultDelay, ShimSHA256: [][32]byte{yettSHA256}, SSH: w.ssh, Recordings: w.recordings,
		Logger: slog.New(slog.NewTextHandler(lockedWriter{w.logMu, w.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if w.oauth != nil {
		cfg.Operations, cfg.OAuth = w.ops, w.oauth
	}
	if w.upstream != nil {
		cfg.Upstreams = w.upstream
	}
	gw, err := New(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.gw = gw
	w.serveErr = make(chan error, 1)
	go func() { w.serveErr <- gw.Serve(context.Background()) }()
	w.t.Cleanup(func() { gw.Close() })
}

func (w *world) stop() {
	w.gw.Close()
	if err := <-w.serveErr; err != nil {
		w.t.Errorf("serve: %v", err)
	}
}

func (w *world) lock() {
	w.t.Helper()
	if err := w.vault.Lock("test"); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) unlock() {
	w.t.Helper()
	if err := w.vault.Unlock(vault.Passphrase(passphrase)); err != nil {
		w.t.Fatal(err)
	}
}

// pending waits for a pending card matching kind and returns it.
func (w *world) pending(kind approval.Kind) approval.Request {
	w.t.Helper()
	deadline := time.Now().Add(testWait)
	for time.Now().Before(deadline) {
		for _, r := range w.gw.Broker().Pending() {
			if r.Kind == kind {
				return r
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Fatalf("no pending %s card", kind)
	return approval.Request{}
}

func (w *world) approveNext() approval.Request {
	w.t.Helper()
	r := w.pending(approval.KindSession)
	if err := w.gw.Broker().Answer(r.ID, true, "test"); err != nil {
		w.t.Fatal(err)
	}
	return r
}

// approvedAgent starts an agent process, has its first call (tagged label)
// approved on its card and checks that the call went through: an agent
// with a live session, the starting point of the authority tests.
func (w *world) approvedAgent(label string) *agent {
	w.t.Helper()
	a := startAgent(w.t, w.runDir)
	a.connect()
	wait := a.callAsync(agentapi.ToolHTTPRequest, w.req(tag(label)))
	w.approveNext()
	mustContain(w.t, wait(), `"status":200`)
	return a
}

// checkNoLeak: the canary is in none of the gateway's logs, the journal or
// the audit files.
func (w *world) checkNoLeak() {
	w.logMu.Lock()
	logs := w.logs.String()
	w.logMu.Unlock()
	if strings.Contains(logs, canary) {
		w.t.Error("canary in gateway logs")
	}
	filepath.Walk(w.dataDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(canary)) {
			w.t.Errorf("canary in %s", p)
		}
		return nil
	})
}

// req is an http.request to the receiver carrying id in path, header and body.
func (w *world) req(id string) map[string]any {
	return map[string]any{
		"method": "POST", "url": "http://" + w.recv.addr + "/replay-test/" + id,
		"headers":         map[string]string{"X-Replay-Test-Id": id},
		"body":            map[string]any{"request_id": id},
		"idempotency_key": "key-" + id,
	}
}

// settle watches the receiver for a late arrival of marker.
func (w *world) settleAbsent(marker string) {
	w.t.Helper()
	deadline := time.Now().Add(*settleWait)
	for time.Now().Before(deadline) {
		if n := w.recv.count(w.t, marker); n != 0 {
			w.t.Fatalf("%s arrived %d times", marker, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustContain(t testing.TB, r agentReply, want string) {
	t.Helper()
	if !strings.Contains(r.Text, want) && !strings.Contains(r.Err, want) {
		t.Fatalf("reply %+v does not contain %q", r, want)
	}
	if strings.Contains(r.Text+r.Err, canary) {
		t.Fatal("canary reached the agent")
	}
}
