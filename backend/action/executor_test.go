package action

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestCanaryNeverReturned: a server that reflects the credential in every
// way it can; nothing of it comes back to the agent.
func TestCanaryNeverReturned(t *testing.T) {
	rec := &recorder{handle: func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
		raw := strings.TrimPrefix(strings.TrimPrefix(auth, "Bearer "), "Token ")
		w.Header().Set("X-Echo", auth)
		w.Header().Set("X-Echo-B64", base64.StdEncoding.EncodeToString([]byte(raw)))
		w.Header().Set("X-"+raw, "name")
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "session-" + raw})
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, "you sent %q; raw %s; b64 %s; url %s", auth, raw,
			base64.StdEncoding.EncodeToString([]byte(raw)), strings.ReplaceAll(raw, "-", "%2D"))
	}}
	srv, ex, _ := tlsServer(t, rec, Config{})
	for _, inj := range []Injection{
		{Format: InjectBearer},
		{Format: InjectBasic, Username: "bot"},
		{Format: InjectHeader, HeaderName: "X-Api-Key", Template: "Token {secret}"},
	} {
		t.Run(string(inj.Format), func(t *testing.T) {
			cred := &Credential{Injection: inj, Secret: secretSource{secret: canary}, InternalHost: true}
			resp, err := ex.Do(context.Background(), Request{Method: "POST", URL: exURL(srv, "/x"), Body: []byte("{}")}, cred)
			if err != nil {
				t.Fatal(err)
			}
			got := rec.last()
			switch inj.Format {
			case InjectBearer:
				if got.Get("Authorization") != "Bearer "+canary {
					t.Errorf("server got Authorization %q", got.Get("Authorization"))
				}
			case InjectBasic:
				if u, p, ok := (&http.Request{Header: got}).BasicAuth(); !ok || u != "bot" || p != canary {
					t.Errorf("server got basic %q %q %v", u, p, ok)
				}
			case InjectHeader:
				if got.Get("X-Api-Key") != "Token "+canary || got.Get("Authorization") != "" {
					t.Errorf("server got X-Api-Key %q", got.Get("X-Api-Key"))
				}
			}
			if resp.Status != http.StatusTeapot {
				t.Errorf("status %d", resp.Status)
			}
			assertNoCanary(t, "body", string(resp.Body))
			assertNoCanary(t, "status text", resp.StatusText)
			assertNoCanary(t, "headers", fmt.Sprint(resp.Header))
			if resp.Header.Get("Set-Cookie") != "" {
				t.Error("Set-Cookie from the bound host reached the agent")
			}
			if !strings.Contains(string(resp.Body), Redacted) {
				t.Errorf("body shows no redaction: %s", resp.Body)
			}
		})
	}
}

func TestTruncatedBodyDoesNotLeakSecretPrefix(t *testing.T) {
	rec := &recorder{handle: func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 95) + canary + strings.Repeat("y", 100)))
	}}
	srv, ex, _ := tlsServer(t, rec, Config{MaxResponseBytes: 100})
	resp, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/")}, bearer())
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated {
		t.Error("not marked truncated")
	}
	assertNoCanary(t, "truncated body", string(resp.Body))
	if strings.Contains(string(resp.Body), "CANA") {
		t.Errorf("secret prefix survives the cut: %q", resp.Body)
	}
}

func TestReservedHeadersRefused(t *testing.T) {
	rec := &recorder{}
	srv, ex, _ := tlsServer(t, rec, Config{})
	hdrCred := &Credential{Injection: Injection{Format: InjectHeader, HeaderName: "X-Api-Key"}, Secret: secretSource{secret: canary}, InternalHost: true}
	tests := []struct {
		header string
		cred   *Credential
	}{
		{"Authorization", nil}, {"authorization", bearer()}, {"Proxy-Authorization", nil},
		{"Host", nil}, {"Connection", nil}, {"Keep-Alive", nil}, {"TE", nil}, {"Trailer", nil},
		{"Transfer-Encoding", nil}, {"Upgrade", nil}, {"Proxy-Connection", nil},
		{"Content-Length", nil}, {"Idempotency-Key", bearer()}, {"X-Forwarded-For", nil},
		{"Cookie", bearer()}, {"x-api-key", hdrCred},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			_, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/"), Headers: map[string]string{tt.header: "agent-value"}}, tt.cred)
			if !errors.Is(err, ErrForbiddenHeader) {
				t.Fatalf("got %v, want ErrForbiddenHeader", err)
			}
		})
	}
	if n := rec.hits.Load(); n != 0 {
		t.Fatalf("%d refused requests reached the server", n)
	}
	t.Run("ordinary headers pass", func(t *testing.T) {
		_, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/"), Headers: map[string]string{"X-Replay-Test-Id": "fresh-1", "Accept": "application/json"}}, bearer())
		if err != nil {
			t.Fatal(err)
		}
		if rec.last().Get("X-Replay-Test-Id") != "fresh-1" {
			t.Error("agent header lost")
		}
	})
	t.Run("header injection", func(t *testing.T) {
		_, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/"), Headers: map[string]string{"X-A": "v\r\nAuthorization: Bearer x"}}, nil)
		if !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("got %v, want ErrInvalidRequest", err)
		}
	})
}

func TestSSRFRefused(t *testing.T) {
	rec := &recorder{}
	plain := httptest.NewServer(rec)
	defer plain.Close()
	p := port(plain)
	res := &mapResolver{m: map[string][]netip.Addr{
		"mixed.test":    addrs("192.0.2.10", "169.254.169.254"),
		"internal.test": addrs("10.1.2.3"),
		"loop.test":     addrs("127.0.0.1"),
	}}
	ex := New(Config{Resolver: res, Timeout: 5 * time.Second})
	tests := []struct {
		name string
		url  string
		cred *Credential
		want error
	}{
		{"aws metadata", "http://169.254.169.254/latest/meta-data/", nil, ErrForbiddenTarget},
		{"aws metadata with credential", "https://169.254.169.254/", bearer(), ErrForbiddenTarget},
		{"ipv6 link-local", "http://[fe80::1]:" + p + "/", nil, ErrForbiddenTarget},
		{"alibaba metadata", "http://100.100.100.200/", nil, ErrForbiddenTarget},
		{"aws ipv6 metadata", "http://[fd00:ec2::254]/", nil, ErrForbiddenTarget},
		{"gcp metadata name", "http://metadata.google.internal/", nil, ErrForbiddenTarget},
		// A trailing dot is refused as a URL before any name is read
		// (backend/target): one answer for the binding and the executor.
		{"gcp metadata name, trailing dot", "https://Metadata.Google.Internal./", bearer(), ErrInvalidRequest},
		{"mapped metadata", "http://[::ffff:169.254.169.254]/", nil, ErrForbiddenTarget},
		{"nat64 metadata", "http://[64:ff9b::a9fe:a9fe]/", nil, ErrForbiddenTarget},
		{"zero address", "http://0.0.0.0:" + p + "/", nil, ErrForbiddenTarget},
		{"name with a metadata address among others", "http://mixed.test/", nil, ErrForbiddenTarget},
		{"loopback without credential", plain.URL + "/", nil, ErrForbiddenTarget},
		{"loopback by name without credential", "http://loop.test:" + p + "/", nil, ErrForbiddenTarget},
		{"loopback name, credential not marked internal", "https://loop.test:" + p + "/",
			&Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: canary}}, ErrForbiddenTarget},
		{"private without credential", "http://10.0.0.1/", nil, ErrForbiddenTarget},
		{"private by name without binding", "https://internal.test/", nil, ErrForbiddenTarget},
		{"credential over plain http to a name", "http://example.org/",
			&Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: canary}}, ErrInsecureScheme},
		{"credential over plain http to an internal non-loopback", "http://internal.test/", bearer(), ErrInsecureScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ex.Do(context.Background(), Request{URL: tt.url}, tt.cred)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			assertNoCanary(t, "error", fmt.Sprint(err))
		})
	}
	if n := rec.hits.Load(); n != 0 {
		t.Fatalf("%d refused requests reached the loopback server", n)
	}
}

func TestLoopbackAllowedWhenBindingNamesIt(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	ex := New(Config{})
	// The binding is to the 127.0.0.1 literal: it names loopback, and plain
	// HTTP is allowed to loopback.
	cred := &Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: canary}}
	resp, err := ex.Do(context.Background(), Request{URL: srv.URL + "/replay-test/fresh-1"}, cred)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || rec.last().Get("Authorization") != "Bearer "+canary {
		t.Fatalf("status %d, auth %q", resp.Status, rec.last().Get("Authorization"))
	}
}

func TestCredentialedRequestNeverFollowsRedirect(t *testing.T) {
	rec := &recorder{handle: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.Write([]byte("followed"))
	}}
	srv, ex, _ := tlsServer(t, rec, Config{})
	resp, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/start")}, bearer())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusFound || resp.Header.Get("Location") != "/elsewhere" {
		t.Fatalf("status %d location %q", resp.Status, resp.Header.Get("Location"))
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.paths) != 1 {
		t.Fatalf("server saw %v; the redirect was followed", rec.paths)
	}
}

// TestDNSRebinding: the name answers a harmless address first and loopback
// afterwards. The executor must resolve once and dial what it checked, so
// the loopback server never sees the request.
func TestDNSRebinding(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	res := &mapResolver{next: func(host string, call int) []netip.Addr {
		if call == 1 {
			return addrs("192.0.2.1") // TEST-NET-1: passes the check, reaches nothing
		}
		return addrs("127.0.0.1")
	}}
	ex := New(Config{Resolver: res, Timeout: time.Second})
	_, err := ex.Do(context.Background(), Request{URL: "http://rebind.test:" + port(srv) + "/"}, nil)
	if err == nil {
		t.Fatal("request to an unreachable checked address succeeded")
	}
	if n := rec.hits.Load(); n != 0 {
		t.Fatal("request reached loopback: the name was resolved again after the check")
	}
	if c := res.calls["rebind.test"]; c != 1 {
		t.Fatalf("name resolved %d times, want once", c)
	}
}

func TestVerifyDialedRefusesOtherAddress(t *testing.T) {
	check := verifyDialed(netip.MustParseAddr("192.0.2.1"))
	if err := check("tcp4", "127.0.0.1:80", nil); !errors.Is(err, ErrForbiddenTarget) {
		t.Fatalf("got %v", err)
	}
	if err := check("tcp4", "192.0.2.1:80", nil); err != nil {
		t.Fatal(err)
	}
}

func TestTimeoutAndCap(t *testing.T) {
	release := make(chan struct{})
	rec := &recorder{handle: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		w.Write([]byte(strings.Repeat("z", 2048)))
	}}
	srv, ex, _ := tlsServer(t, rec, Config{Timeout: 300 * time.Millisecond, MaxResponseBytes: 1024})
	defer close(release)
	if _, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/slow")}, bearer()); !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	resp, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/big")}, bearer())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Body) != 1024 || !resp.Truncated {
		t.Fatalf("body %d bytes, truncated %v", len(resp.Body), resp.Truncated)
	}
}

func TestIdempotencyKey(t *testing.T) {
	rec := &recorder{}
	srv, ex, _ := tlsServer(t, rec, Config{})
	resp, err := ex.Do(context.Background(), Request{Method: "POST", URL: exURL(srv, "/"), IdempotencyKey: "action-42"}, bearer())
	if err != nil {
		t.Fatal(err)
	}
	if rec.last().Get("Idempotency-Key") != "action-42" || resp.IdempotencyKey != "action-42" {
		t.Fatalf("key %q / %q", rec.last().Get("Idempotency-Key"), resp.IdempotencyKey)
	}
	resp, err = ex.Do(context.Background(), Request{Method: "POST", URL: exURL(srv, "/")}, bearer())
	if err != nil {
		t.Fatal(err)
	}
	if k := rec.last().Get("Idempotency-Key"); len(k) != 32 || k != resp.IdempotencyKey {
		t.Fatalf("generated key %q, returned %q", k, resp.IdempotencyKey)
	}
}

func TestSecretUnavailableSendsNothing(t *testing.T) {
	rec := &recorder{}
	srv, ex, _ := tlsServer(t, rec, Config{})
	cred := &Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{err: errors.New("vault locked")}, InternalHost: true}
	if _, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/")}, cred); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("got %v, want ErrNoSecret", err)
	}
	if rec.hits.Load() != 0 {
		t.Fatal("request sent without a secret")
	}
}

func TestTransportErrorRedacted(t *testing.T) {
	// The server drops the connection; whatever error text results, the
	// secret is not in it.
	rec := &recorder{handle: func(w http.ResponseWriter, r *http.Request) {
		c, _, _ := w.(http.Hijacker).Hijack()
		c.Close()
	}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	cred := &Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: canary}}
	_, err := New(Config{}).Do(context.Background(), Request{URL: srv.URL + "/?q=" + canary}, cred)
	if !errors.Is(err, ErrTransport) {
		t.Fatalf("got %v, want ErrTransport", err)
	}
	assertNoCanary(t, "transport error", err.Error())
}
