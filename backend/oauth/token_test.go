package oauth

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// TestAccessTokenRedacts: an access token, held in the cache or lent in a
// Lease, prints, marshals and logs as REDACTED through every path.
func TestAccessTokenRedacts(t *testing.T) {
	const tok = "CANARY-access-token-5e1f"
	at := &accessToken{gen: 3, value: newTokenValue(tok), typ: "Bearer"}
	lease := &Lease{t: at, value: newTokenValue(tok), id: "auth-1"}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("token", "at", at, "lease", lease, "value", at.value, "deref", *at)
	var out strings.Builder
	for _, v := range []any{at, *at, lease, *lease, at.value, lease.value} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
		js, _ := json.Marshal(v)
		out.Write(js)
	}
	out.WriteString(logs.String())
	for _, form := range []string{tok, "CANARY", fmt.Sprintf("%x", tok), fmt.Sprint([]byte(tok)[:6])} {
		if strings.Contains(out.String(), form) {
			t.Fatalf("the access token leaks (%q) in:\n%s", form, out.String())
		}
	}
}

// TestLeasedTokenNotReflected: an access token lent to the executor gets
// the same protection as a vault credential: an API that echoes it back
// compressed in a coding Yett did not ask for, in a 206 slice, as hex, or
// in base64 never returns it in a readable form.
func TestLeasedTokenNotReflected(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: "canary-secret-lease"})
	e := newEnv(t, t.TempDir(), Config{})
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "svc", Provider: "custom", Flow: FlowClientCredentials, Environment: "production",
		Endpoints: Endpoints{Issuer: p.URL}, ClientID: "yett-test", ClientAuth: ClientAuthSecret, ClientSecret: []byte("canary-secret-lease"),
		Owner: "alice", BackupRevoker: "bob",
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		seen = tok
		mu.Unlock()
		switch r.URL.Path {
		case "/deflate":
			var buf bytes.Buffer
			z := zlib.NewWriter(&buf)
			z.Write([]byte("token " + tok))
			z.Close()
			w.Header().Set("Content-Encoding", "deflate")
			w.Write(buf.Bytes())
		case "/partial":
			w.WriteHeader(http.StatusPartialContent)
			w.Write([]byte(tok[:3]))
		default:
			fmt.Fprintf(w, "hex %x b64 %s", tok, base64.StdEncoding.EncodeToString([]byte("Bearer "+tok)))
		}
	}))
	defer api.Close()
	exec := action.New(action.Config{})
	for _, path := range []string{"/deflate", "/partial", "/forms"} {
		l, err := e.m.Acquire(context.Background(), fv.AuthorizationID, "svc.echo")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := exec.Do(context.Background(), action.Request{URL: api.URL + path}, l.Credential())
		l.Release(true)
		mu.Lock()
		tok := seen
		mu.Unlock()
		if len(tok) < 8 {
			t.Fatalf("the API saw no token")
		}
		var out string
		if resp != nil {
			out = string(resp.Body)
		}
		out += fmt.Sprint(err)
		for _, form := range []string{tok, fmt.Sprintf("%x", tok), base64.StdEncoding.EncodeToString([]byte("Bearer " + tok))[12:30]} {
			if strings.Contains(out, form) {
				t.Fatalf("%s: the access token comes back: %q", path, out)
			}
		}
		if path != "/forms" && !errors.Is(err, action.ErrResponseWithheld) {
			t.Fatalf("%s: %v, want the answer withheld", path, err)
		}
	}
}

// TestWaitersShareOneRefresh: 100 callers that find no token in memory share
// one refresh and get the same token; once the authorization is revoked,
// none of them reaches the provider. A token still in memory is used only
// after the row says it is in service: another process's disable (written
// straight to the row here, so this manager's memory is not told) refuses it.
func TestWaitersShareOneRefresh(t *testing.T) {
	e, id, p := connectDevice(t)
	acquireAll := func(n int) ([]*Lease, []error) {
		leases, errs := make([]*Lease, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { leases[i], errs[i] = e.m.Acquire(context.Background(), id, "test.op") })
		}
		wg.Wait()
		return leases, errs
	}

	before := p.TokenRequests()["refresh_token"]
	e.expire(id)
	leases, errs := acquireAll(100)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
		if leases[i].t != leases[0].t {
			t.Fatalf("caller %d got another token than caller 0", i)
		}
		leases[i].Release(false)
	}
	if got := p.TokenRequests()["refresh_token"] - before; got != 1 {
		t.Fatalf("100 waiting callers sent %d refresh requests, want 1", got)
	}

	e.m.db.Exec(`UPDATE oauth_authorizations SET state = ? WHERE id = ?`, StateDisabled, id)
	if _, err := e.m.Acquire(context.Background(), id, "test.op"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("a cached token of an authorization disabled by another process: %v, want ErrDisabled", err)
	}
	e.m.db.Exec(`UPDATE oauth_authorizations SET state = ? WHERE id = ?`, StateActive, id)

	if _, err := e.m.Revoke(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	before = p.TokenRequests()["refresh_token"]
	_, errs = acquireAll(100)
	for i, err := range errs {
		if !errors.Is(err, ErrDisabled) {
			t.Fatalf("caller %d after revoke: %v, want ErrDisabled", i, err)
		}
	}
	if got := p.TokenRequests()["refresh_token"] - before; got != 0 {
		t.Fatalf("callers of a revoked authorization sent %d refresh requests", got)
	}
}

// A lease taken while the cached token is being dropped (a lock, a
// disable, Close wipes it in place) is never a torn or zeroed copy: it
// holds the whole token, or Acquire says why there is none. Run with
// -race: the copy and the wipe are under one lock.
func TestAcquireWhileTheCacheIsDropped(t *testing.T) {
	e, id, _ := connectDevice(t)
	lease, err := e.m.Acquire(context.Background(), id, "test")
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	lease.WithSecret(context.Background(), func(b []byte) error { want = append(want, b...); return nil })
	lease.Release(false)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				e.m.tokens.dropCache("")
				runtime.Gosched()
			}
		}
	}()
	for i := 0; i < 1500; i++ {
		l, err := e.m.Acquire(context.Background(), id, "test")
		if err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
		l.WithSecret(context.Background(), func(b []byte) error {
			if string(b) != string(want) {
				t.Errorf("lease %d holds a torn token (%d bytes, want %d)", i, len(b), len(want))
			}
			return nil
		})
		l.Release(false)
	}
	close(stop)
	wg.Wait()
}
