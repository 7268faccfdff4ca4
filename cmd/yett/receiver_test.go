package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startReceiver runs `yett receiver` in-process on a free loopback port and
// returns its base URL and log path.
func startReceiver(t *testing.T) (string, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "events.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		env := &Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: &stderr, Getenv: func(string) string { return "" }}
		done <- Run(ctx, env, []string{"receiver", "--addr", "127.0.0.1:0", "--log", logPath})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("receiver did not start: %v (stderr %q)", err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	url := strings.Fields(strings.TrimPrefix(line, "yett receiver: listening on "))[0]
	url = strings.TrimSuffix(url, ",")
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("receiver exited %d", code)
		}
	})
	return url, logPath
}

func readEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if l == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		out = append(out, ev)
	}
	return out
}

func TestReceiverLogsArrival(t *testing.T) {
	url, logPath := startReceiver(t)
	const auth = "Bearer CANARY-receiver-51e0"
	req, _ := http.NewRequest("POST", url+"/replay-test/fresh-91ce?x=1", strings.NewReader(`{"kind":"fresh"}`))
	req.Header.Set("X-Replay-Test-Id", "fresh-91ce")
	req.Header.Set("Authorization", auth)
	before := time.Now().UTC()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"received":true}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("answer %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	// The line is on disk before the answer: no waiting needed.
	evs := readEvents(t, logPath)
	if len(evs) != 1 {
		t.Fatalf("%d lines, want 1", len(evs))
	}
	ev := evs[0]
	sum := sha256.Sum256([]byte(auth))
	want := map[string]any{
		"method": "POST", "path": "/replay-test/fresh-91ce?x=1", "request_id": "fresh-91ce",
		"auth_marker": hex.EncodeToString(sum[:])[:12], "body": `{"kind":"fresh"}`,
	}
	for k, v := range want {
		if ev[k] != v {
			t.Errorf("%s = %v, want %v", k, ev[k], v)
		}
	}
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ev["received_at"]))
	if err != nil || at.Before(before.Add(-time.Second)) {
		t.Errorf("received_at %v: %v", ev["received_at"], err)
	}
	raw, _ := os.ReadFile(logPath)
	if bytes.Contains(raw, []byte("CANARY")) {
		t.Error("the log holds the Authorization value")
	}
	if !bytes.HasPrefix(raw, []byte(`{"received_at":`)) {
		t.Errorf("field order differs from the seed: %s", raw)
	}
}

func TestReceiverNoAuthNoID(t *testing.T) {
	url, logPath := startReceiver(t)
	resp, err := http.Get(url + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ev := readEvents(t, logPath)[0]
	if ev["auth_marker"] != nil || ev["request_id"] != nil || ev["method"] != "GET" {
		t.Fatalf("event %v", ev)
	}
}

func TestReceiverConcurrentLinesDoNotInterleave(t *testing.T) {
	url, logPath := startReceiver(t)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", url+"/c", strings.NewReader(strings.Repeat("b", 4096)))
			req.Header.Set("X-Replay-Test-Id", fmt.Sprintf("c-%d", i))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	evs := readEvents(t, logPath)
	seen := map[any]bool{}
	for _, ev := range evs {
		seen[ev["request_id"]] = true
	}
	if len(evs) != 32 || len(seen) != 32 {
		t.Fatalf("%d lines, %d distinct ids; want 32", len(evs), len(seen))
	}
}

func TestReceiverRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8787", "localhost:0", "example.com:80", "127.0.0.1"} {
		t.Run(addr, func(t *testing.T) {
			var stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
			code := Run(context.Background(), env, []string{"receiver", "--addr", addr, "--log", filepath.Join(t.TempDir(), "l")})
			if code != 2 || !strings.Contains(stderr.String(), "receiver:") {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
		})
	}
}
