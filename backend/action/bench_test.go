package action

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkExecutor compares one credentialed request through the executor
// (checks, injection, redaction) with a plain net/http request to the same
// loopback server, each over a fresh connection per request and over a
// kept-alive one. Run the four together; the ratios executor/direct are
// the cost of Yett's checks.
func BenchmarkExecutor(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"received":true}`))
	}))
	defer srv.Close()
	direct := func(b *testing.B, keepAlive bool) {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: !keepAlive}}
		defer client.CloseIdleConnections()
		for b.Loop() {
			req, _ := http.NewRequest("POST", srv.URL+"/x", nil)
			req.Header.Set("Authorization", "Bearer "+canary)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	executor := func(b *testing.B, keepAlive bool) {
		ex := New(Config{})
		defer ex.CloseIdleConnections()
		cred := &Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: canary}}
		for b.Loop() {
			if _, err := ex.Do(context.Background(), Request{Method: "POST", URL: srv.URL + "/x"}, cred); err != nil {
				b.Fatal(err)
			}
			if !keepAlive {
				ex.CloseIdleConnections()
			}
		}
	}
	b.Run("direct/fresh", func(b *testing.B) { direct(b, false) })
	b.Run("executor/fresh", func(b *testing.B) { executor(b, false) })
	b.Run("direct/keepalive", func(b *testing.B) { direct(b, true) })
	b.Run("executor/keepalive", func(b *testing.B) { executor(b, true) })
}
