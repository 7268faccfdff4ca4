package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"
)

func init() {
	commands["receiver"] = command{
		usage:   receiverUsage,
		summary: "run the controlled receiver for release drills (loopback only)",
		run:     runReceiver,
	}
}

const receiverUsage = `usage: yett receiver [--addr 127.0.0.1:8787] [--log FILE]

A loopback HTTP server for the replay drill: every arrival is appended to
FILE (default receiver-events.jsonl) as one JSON line with received_at,
method, path, request_id (the X-Replay-Test-Id header), auth_marker (first
12 hex digits of the SHA-256 of the Authorization header, never the header
itself) and body, and answered 200 {"received":true}. Each line is synced
to disk before the answer, so the file is the receiver's word on what
arrived.
`

// receiverMaxBody bounds what one arrival may write to the log.
const receiverMaxBody = 8 << 20

func runReceiver(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("yett receiver", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, receiverUsage) }
	addr := fs.String("addr", "127.0.0.1:8787", "loopback address to listen on")
	logPath := fs.String("log", "receiver-events.jsonl", "file to append arrivals to")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return withExitCode(2, errors.New("receiver: unexpected arguments"))
	}
	if err := loopbackOnly(*addr); err != nil {
		return withExitCode(2, err)
	}
	logFile, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	defer logFile.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	fmt.Fprintf(env.Stdout, "yett receiver: listening on http://%s, appending to %s\n", ln.Addr(), *logPath)
	srv := &http.Server{Handler: &receiver{log: logFile}, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	})
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("receiver: %w", err)
	}
	return nil
}

// loopbackOnly refuses any listen address but a loopback IP with a port:
// the receiver records whatever reaches it and must not be reachable from
// the network. "localhost" is refused too, because it may resolve to
// something else.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("receiver: --addr %q: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return fmt.Errorf("receiver: --addr %q is not a loopback IP address (use 127.0.0.1 or [::1])", addr)
	}
	return nil
}

// arrival is one log line; field order is the seed's.
type arrival struct {
	ReceivedAt string  `json:"received_at"`
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	RequestID  *string `json:"request_id"`
	AuthMarker *string `json:"auth_marker"`
	Body       string  `json:"body"`
	Truncated  bool    `json:"body_truncated,omitempty"`
}

type receiver struct {
	mu  sync.Mutex
	log *os.File
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, receiverMaxBody+1))
	a := arrival{
		ReceivedAt: time.Now().UTC().Format(time.RFC3339Nano),
		Method:     r.Method,
		Path:       r.URL.RequestURI(),
		Body:       string(body[:min(len(body), receiverMaxBody)]),
		Truncated:  len(body) > receiverMaxBody,
	}
	if id := r.Header.Get("X-Replay-Test-Id"); id != "" {
		a.RequestID = &id
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		sum := sha256.Sum256([]byte(auth))
		marker := hex.EncodeToString(sum[:])[:12]
		a.AuthMarker = &marker
	}
	if err := rc.append(a); err != nil {
		// The drill's evidence could not be written: say so instead of
		// answering as if it had been.
		http.Error(w, `{"received":false}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"received":true}`))
}

// append writes one line and syncs it, under a lock so lines never
// interleave.
func (rc *receiver) append(a arrival) error {
	line, err := json.Marshal(a)
	if err != nil {
		return err
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, err := rc.log.Write(append(line, '\n')); err != nil {
		return err
	}
	return rc.log.Sync()
}
