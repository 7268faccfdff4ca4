package action

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkExecutor compares one credentialed request through the executor
// (checks, injection, one-shot connection, redaction) with a plain
// net/http request to the same loopback server over a fresh connection.
func BenchmarkExecutor(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"received":true}`))
	}))
	defer srv.Close()
	b.Run("direct", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
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
	})
	b.Run("executor", func(b *testing.B) {
		ex := New(Config{})
		cred := &Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: canary}}
		for b.Loop() {
			if _, err := ex.Do(context.Background(), Request{Method: "POST", URL: srv.URL + "/x"}, cred); err != nil {
				b.Fatal(err)
			}
		}
	})
}
