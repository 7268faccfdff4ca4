package providers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// docFor is a minimal valid document for issuer, with loopback endpoints.
func docFor(issuer string) map[string]any {
	return map[string]any{
		"issuer":                                         issuer,
		"authorization_endpoint":                         issuer + "/authorize",
		"token_endpoint":                                 issuer + "/token",
		"revocation_endpoint":                            issuer + "/revoke",
		"jwks_uri":                                       issuer + "/jwks",
		"response_types_supported":                       []string{"code"},
		"code_challenge_methods_supported":               []string{"S256"},
		"dpop_signing_alg_values_supported":              []string{"ES256"},
		"authorization_response_iss_parameter_supported": true,
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// recordingServer serves handlers by exact path and records every path
// asked for, in order.
type recordingServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newServer(t *testing.T, routes func(srv *recordingServer) map[string]http.HandlerFunc) *recordingServer {
	t.Helper()
	rs := &recordingServer{}
	var table map[string]http.HandlerFunc
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.paths = append(rs.paths, r.URL.Path)
		rs.mu.Unlock()
		if h, ok := table[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(rs.Close)
	table = routes(rs)
	return rs
}

func (rs *recordingServer) asked() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.paths...)
}

func TestDiscoverOpenIDConfiguration(t *testing.T) {
	srv := newServer(t, func(srv *recordingServer) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			"/.well-known/openid-configuration": func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, docFor(srv.URL))
			},
		}
	})
	m, err := Discover(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if m.Issuer != srv.URL || m.TokenEndpoint != srv.URL+"/token" || m.RevocationEndpoint != srv.URL+"/revoke" {
		t.Errorf("metadata = %+v", m)
	}
	if !m.AuthorizationResponseIssParameterSupported || len(m.DPoPSigningAlgValuesSupported) != 1 {
		t.Errorf("optional fields lost: %+v", m)
	}
	if got := srv.asked(); len(got) != 1 {
		t.Errorf("asked %v, want only the OIDC location", got)
	}
}

func TestDiscoverRFC8414PathInsertion(t *testing.T) {
	for _, suffix := range []string{"/tenant", "/tenant/"} {
		t.Run(suffix, func(t *testing.T) {
			var issuer string
			srv := newServer(t, func(srv *recordingServer) map[string]http.HandlerFunc {
				issuer = srv.URL + suffix
				return map[string]http.HandlerFunc{
					"/.well-known/oauth-authorization-server/tenant": func(w http.ResponseWriter, r *http.Request) {
						doc := docFor(srv.URL + "/tenant")
						doc["issuer"] = issuer
						writeJSON(w, doc)
					},
				}
			})
			m, err := Discover(context.Background(), nil, issuer)
			if err != nil {
				t.Fatal(err)
			}
			if m.Issuer != issuer {
				t.Errorf("issuer = %q, want %q", m.Issuer, issuer)
			}
			want := []string{"/tenant/.well-known/openid-configuration", "/.well-known/oauth-authorization-server/tenant"}
			if got := srv.asked(); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("asked %v, want %v", got, want)
			}
		})
	}
}

func TestDiscoverRefuses(t *testing.T) {
	other := newServer(t, func(srv *recordingServer) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			"/.well-known/openid-configuration": func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, docFor(srv.URL))
			},
		}
	})
	secret := "do-not-echo-" + strings.Repeat("x", 10)
	tests := []struct {
		name    string
		handler func(issuer string) http.HandlerFunc
		want    error
	}{
		{"issuer mismatch", func(issuer string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, docFor("https://attacker.example"))
			}
		}, ErrIssuerMismatch},
		{"issuer with trailing slash is another issuer", func(issuer string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				doc := docFor(issuer)
				doc["issuer"] = issuer + "/"
				writeJSON(w, doc)
			}
		}, ErrIssuerMismatch},
		{"http endpoint on another host", func(issuer string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				doc := docFor(issuer)
				doc["token_endpoint"] = "http://auth.example.com/token"
				writeJSON(w, doc)
			}
		}, ErrInsecureEndpoint},
		{"oversized body with length", func(issuer string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				body := `{"issuer":"` + strings.Repeat("a", MaxMetadataBytes) + `"}`
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				w.Write([]byte(body))
			}
		}, ErrMetadataTooLarge},
		{"oversized body streamed", func(issuer string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(`{"issuer":"`))
				w.(http.Flusher).Flush() // no Content-Length from here on
				for range MaxMetadataBytes / 1024 {
					w.Write([]byte(strings.Repeat("b", 1024)))
				}
				w.Write([]byte(`"}`))
			}
		}, ErrMetadataTooLarge},
		{"redirect to another host", func(issuer string) http.HandlerFunc {
			// Same address under another name: a different host to the client.
			target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
			return func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target+"/.well-known/openid-configuration", http.StatusFound)
			}
		}, ErrRedirectRefused},
		{"not JSON", func(issuer string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte("<html>" + secret + "</html>"))
			}
		}, ErrInvalidMetadata},
		{"wrong field type", func(issuer string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				doc := docFor(issuer)
				doc["scopes_supported"] = secret
				writeJSON(w, doc)
			}
		}, ErrInvalidMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(srv *recordingServer) map[string]http.HandlerFunc {
				return map[string]http.HandlerFunc{"/.well-known/openid-configuration": tt.handler(srv.URL)}
			})
			m, err := Discover(context.Background(), nil, srv.URL)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Discover = %+v, %v; want %v", m, err, tt.want)
			}
			if strings.Contains(err.Error(), secret) || len(err.Error()) > 300 {
				t.Errorf("error echoes the body: %.300s", err)
			}
			// A refused document is final: the RFC 8414 location is not tried.
			if got := srv.asked(); len(got) != 1 {
				t.Errorf("asked %v after a refused document", got)
			}
		})
	}
}

func TestDiscoverFollowsSameHostRedirect(t *testing.T) {
	srv := newServer(t, func(srv *recordingServer) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			"/.well-known/openid-configuration": func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/moved", http.StatusMovedPermanently)
			},
			"/moved": func(w http.ResponseWriter, r *http.Request) { writeJSON(w, docFor(srv.URL)) },
		}
	})
	client := srv.Client()
	if _, err := Discover(context.Background(), client, srv.URL); err != nil {
		t.Fatal(err)
	}
	if client.CheckRedirect != nil {
		t.Error("Discover changed the caller's client")
	}
}

func TestDiscoverNoMetadata(t *testing.T) {
	srv := newServer(t, func(*recordingServer) map[string]http.HandlerFunc { return nil })
	_, err := Discover(context.Background(), nil, srv.URL+"/x")
	if !errors.Is(err, ErrNoMetadata) {
		t.Fatalf("err = %v, want ErrNoMetadata", err)
	}
	if !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("error does not say what each location answered: %v", err)
	}
}

func TestDiscoverBadIssuer(t *testing.T) {
	for _, issuer := range []string{
		"", "not a url", "http://auth.example.com", "https://auth.example.com?x=1",
		"https://auth.example.com#f", "ftp://auth.example.com", "https://user@auth.example.com",
	} {
		t.Run(issuer, func(t *testing.T) {
			if _, err := Discover(context.Background(), nil, issuer); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestDiscoverDefaultTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, func(*recordingServer) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			"/.well-known/openid-configuration": func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-release:
				case <-r.Context().Done():
				}
			},
		}
	})
	defer close(release)
	old := discoveryTimeout
	discoveryTimeout = 200 * time.Millisecond
	defer func() { discoveryTimeout = old }()

	start := time.Now()
	_, err := Discover(context.Background(), nil, srv.URL)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}
