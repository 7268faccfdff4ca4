package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// seedRow stores an unattended authorization whose access token has
// expired and whose refresh token is "rt-canary-0001", against tokenURL.
func seedRow(t *testing.T, e *env, tokenURL string) string {
	t.Helper()
	r, err := e.m.connector.newRow(context.Background(), ConnectRequest{Name: "seeded", Provider: "custom", Flow: FlowAuthorizationCode,
		Environment: "development", Endpoints: Endpoints{AuthorizationEndpoint: tokenURL, TokenEndpoint: tokenURL},
		ClientID: "c", ClientAuth: ClientAuthNone, Unattended: true, Owner: "o", BackupRevoker: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if r.SealedRefresh, err = e.vault.SealBlob(purposeToken, tokenAD(r.ID, "refresh", r.Generation), []byte("rt-canary-0001")); err != nil {
		t.Fatal(err)
	}
	if err := e.m.db.Create(r).Error; err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func tokenServer(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/token"
}

func TestRefreshErrorClasses(t *testing.T) {
	ctx := context.Background()
	t.Run("5xx is transient and keeps the token", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), Config{})
		var n atomic.Int32
		id := seedRow(t, e, tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"access_token":"at-canary-0002","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-canary-0003"}`))
		}))
		if _, err := e.m.Acquire(ctx, id, "x.y"); !errors.Is(err, ErrTransient) {
			t.Fatalf("503: %v", err)
		}
		r, _ := loadRow(e.m.db, id)
		if r.State != StateActive || r.Generation != 1 || r.RefreshInFlight != 0 || len(r.SealedRefresh) == 0 {
			t.Fatalf("after a 503 the stored token changed: state %s gen %d in-flight %d", r.State, r.Generation, r.RefreshInFlight)
		}
		if _, err := e.m.Acquire(ctx, id, "x.y"); err != nil {
			t.Fatalf("the retry after a 503: %v", err)
		}
		r, _ = loadRow(e.m.db, id)
		rt, _ := e.vault.OpenBlob(purposeToken, tokenAD(id, "refresh", r.Generation), r.SealedRefresh)
		if string(rt) != "rt-canary-0003" {
			t.Fatal("the rotated refresh token was not stored")
		}
		e.checkNoToken("rt-canary-0001", "rt-canary-0003", "at-canary-0002")
	})
	t.Run("invalid_grant needs reconnection after one attempt", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), Config{})
		var n atomic.Int32
		id := seedRow(t, e, tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid_grant","error_description":"rt-canary-0001 is revoked"}`))
		}))
		for range 3 {
			if _, err := e.m.Acquire(ctx, id, "x.y"); !errors.Is(err, ErrNeedsReconnection) {
				t.Fatalf("invalid_grant: %v", err)
			}
		}
		if n.Load() != 1 {
			t.Fatalf("%d token requests after invalid_grant, want 1", n.Load())
		}
		if v, _ := e.m.Authorization(id); v.StateReason != "invalid_grant" {
			t.Errorf("state reason %q", v.StateReason)
		}
		e.checkNoToken("rt-canary-0001")
	})
	t.Run("nothing sent is transient", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), Config{})
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close() // connection refused: the request is never written
		id := seedRow(t, e, "http://"+addr+"/token")
		if _, err := e.m.Acquire(ctx, id, "x.y"); !errors.Is(err, ErrTransient) {
			t.Fatalf("refused connection: %v", err)
		}
		if v, _ := e.m.Authorization(id); v.State != StateActive {
			t.Errorf("state %s", v.State)
		}
	})
	t.Run("a lost answer is never retried with the old token", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), Config{HTTPClient: &http.Client{Timeout: 2 * time.Second}})
		var n atomic.Int32
		id := seedRow(t, e, tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			r.ParseForm() // the request arrived whole; the answer is lost
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
		}))
		if _, err := e.m.Acquire(ctx, id, "x.y"); !errors.Is(err, ErrNeedsReconnection) {
			t.Fatalf("lost answer: %v", err)
		}
		if _, err := e.m.Acquire(ctx, id, "x.y"); !errors.Is(err, ErrNeedsReconnection) {
			t.Fatalf("second try: %v", err)
		}
		if n.Load() != 1 {
			t.Fatalf("the old refresh token was presented %d times", n.Load())
		}
		if v, _ := e.m.Authorization(id); v.StateReason != "response_lost" {
			t.Errorf("state reason %q", v.StateReason)
		}
	})
	t.Run("a token the API refused is refreshed on the next call", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), Config{})
		var n atomic.Int32
		id := seedRow(t, e, tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
			k := n.Add(1)
			w.Header().Set("Content-Type", "application/json")
			// No expires_in: only the API can say the token is no good.
			fmt.Fprintf(w, `{"access_token":"at-canary-%04d","token_type":"Bearer","refresh_token":"rt-canary-%04d"}`, k, k+100)
		}))
		l, err := e.m.Acquire(ctx, id, "x.y")
		if err != nil {
			t.Fatal(err)
		}
		l.Invalidate()
		l.Release(true)
		if _, err := e.m.Acquire(ctx, id, "x.y"); err != nil || n.Load() != 2 {
			t.Fatalf("after a 401 the next call did not refresh (%d requests): %v", n.Load(), err)
		}
		if _, err := e.m.Acquire(ctx, id, "x.y"); err != nil || n.Load() != 2 {
			t.Fatalf("a fresh token was refreshed again (%d requests): %v", n.Load(), err)
		}
	})
	t.Run("a suspended row is refused locally until resumed", func(t *testing.T) {
		// Whether a person answers for a row is the inventory's to say
		// (backend/inventory tests its block); custody refuses by state.
		e := newEnv(t, t.TempDir(), Config{})
		id := seedRow(t, e, "http://127.0.0.1:1/token")
		if err := e.m.Suspend(context.Background(), id, "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.m.Check(id); !errors.Is(err, ErrSuspended) {
			t.Fatalf("suspended row: %v", err)
		}
		if _, err := e.m.Acquire(context.Background(), id, "x.y"); !errors.Is(err, ErrSuspended) {
			t.Fatalf("a suspended row lent a token: %v", err)
		}
		if err := e.m.Suspend(context.Background(), id, "test"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("suspended twice: %v", err)
		}
		if err := e.m.Resume(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if _, err := e.m.Check(id); err != nil {
			t.Fatalf("resumed row: %v", err)
		}
		if err := e.m.Resume(context.Background(), id); !errors.Is(err, ErrInvalid) {
			t.Fatalf("resumed an active row: %v", err)
		}
	})
}
