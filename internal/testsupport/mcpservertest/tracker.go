package mcpservertest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Tracker is a remote MCP server written with the Go SDK, serving
// Streamable HTTP behind real Ory Hydra: it publishes its protected
// resource metadata (RFC 9728), answers 401 with a challenge that names
// it, and accepts only tokens Hydra's introspection calls active. Its
// whoami tool echoes the Authorization header it received, as a careless
// or hostile server would. It keeps the access tokens it accepted in
// memory, for the test to count, and never prints them.
type Tracker struct {
	*httptest.Server // set by StartTracker; nil for NewTracker's
	// URL is its base URL (its MCP endpoint is URL+"/mcp").
	URL     string
	mu      sync.Mutex
	tokens  map[string]int // access token -> requests carrying it
	noAuth  int            // requests refused for having no token
	created []string
	refused map[string]bool // tokens it no longer accepts (RefuseTokensSeen)
}

// StartTracker starts a Tracker on 127.0.0.1 whose tokens come from
// issuer and are checked at introspectURL (RFC 7662); it stops in
// t.Cleanup.
func StartTracker(t testing.TB, issuer, introspectURL string) *Tracker {
	t.Helper()
	s := httptest.NewUnstartedServer(nil)
	tr, h := NewTracker("http://"+s.Listener.Addr().String(), issuer, introspectURL)
	s.Config.Handler = h
	s.Start()
	tr.Server = s
	t.Cleanup(s.Close)
	return tr
}

// NewTracker is a Tracker served at base (http://HOST:PORT) by the
// handler it returns, for a program to serve (the browser test's).
func NewTracker(base, issuer, introspectURL string) (*Tracker, http.Handler) {
	tr := &Tracker{URL: base, tokens: map[string]int{}, refused: map[string]bool{}}
	mux := http.NewServeMux()
	resource := tr.URL + "/mcp"
	srv := mcp.NewServer(&mcp.Implementation{Name: "tracker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Who the request came as", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			got := req.Extra.Header.Get("Authorization")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "You came with " + got}}}, nil, nil
		})
	type issue struct {
		Title string `json:"title"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "create_issue", Description: "Create an issue"},
		func(_ context.Context, _ *mcp.CallToolRequest, in issue) (*mcp.CallToolResult, any, error) {
			tr.mu.Lock()
			tr.created = append(tr.created, in.Title)
			tr.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "created " + in.Title}}}, nil, nil
		})
	admin := &http.Client{Timeout: 10 * time.Second}
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		resp, err := admin.PostForm(introspectURL, url.Values{"token": {token}})
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var in struct {
			Active bool   `json:"active"`
			Scope  string `json:"scope"`
			Exp    int64  `json:"exp"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&in); err != nil {
			return nil, err
		}
		if !in.Active {
			return nil, auth.ErrInvalidToken
		}
		tr.mu.Lock()
		if tr.refused[token] {
			tr.mu.Unlock()
			return nil, auth.ErrInvalidToken
		}
		tr.tokens[token]++
		tr.mu.Unlock()
		return &auth.TokenInfo{Scopes: strings.Fields(in.Scope), Expiration: time.Unix(in.Exp, 0)}, nil
	}
	prmURL := tr.URL + "/.well-known/oauth-protected-resource/mcp"
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			tr.mu.Lock()
			tr.noAuth++
			tr.mu.Unlock()
		}
		protected.ServeHTTP(w, r)
	}))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{issuer}, ScopesSupported: []string{"openid"},
		ResourceName: "Tracker",
	}))
	return tr, mux
}

// RefuseTokensSeen makes the server refuse (401) every access token it
// accepted so far, though the authorization server still calls them
// active: a server that shortened their life, as a provider may.
func (tr *Tracker) RefuseTokensSeen() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for tok := range tr.tokens {
		tr.refused[tok] = true
	}
}

// Unauthenticated counts the requests that came without a token.
func (tr *Tracker) Unauthenticated() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.noAuth
}

// Created are the titles create_issue was called with.
func (tr *Tracker) Created() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.created...)
}

// Tokens are the access tokens it accepted, with how many requests
// carried each.
func (tr *Tracker) Tokens() map[string]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := map[string]int{}
	for k, v := range tr.tokens {
		out[k] = v
	}
	return out
}
