package upstream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// answer is a transport that answers every request with one response,
// without a network.
type answer struct {
	status int
	header string
	body   string
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{"Content-Type": {"application/json"}}
	if a.header != "" {
		h.Set("WWW-Authenticate", a.header)
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader(a.body)), Request: r}, nil
}

// What a server or an authorization server answers is untrusted: any
// status, challenge and body gives a discovery or a registration, or an
// error, and an error never quotes the body.
func FuzzAuthAnswers(f *testing.F) {
	f.Add(401, `Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope="a b"`,
		`{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"]}`)
	f.Add(201, `Bearer error="invalid_token"`, `{"client_id":"c","client_secret":"s","jwks":{}}`)
	f.Add(400, `Basic realm="x", Bearer`, `{"error":"invalid_client_metadata","error_description":"SECRET-IN-BODY"}`)
	f.Fuzz(func(t *testing.T, status int, header, body string) {
		if status < 100 || status > 599 {
			return
		}
		c := &http.Client{Transport: answer{status, header, body}}
		ctx := context.Background()
		if _, err := DiscoverAuth(ctx, c, "https://mcp.example/mcp"); err != nil && len(body) >= 16 && strings.Contains(err.Error(), body) {
			t.Fatalf("discovery quoted the body: %v", err)
		}
		d := &AuthDiscovery{RegistrationEndpoint: "https://as.example/register", Scopes: []string{"a"}}
		r, err := Register(ctx, c, d, "http://127.0.0.1:1/callback")
		if err != nil && len(body) >= 16 && strings.Contains(err.Error(), body) {
			t.Fatalf("registration quoted the body: %v", err)
		}
		if err == nil && r.ClientID == "" {
			t.Fatal("a registration without a client id")
		}
	})
}
