package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// benchDevice connects a public device-flow authorization with a refresh
// token on the test provider.
func benchDevice(b testing.TB) (*env, string) {
	e, id, _ := connectDevice(b)
	return e, id
}

// connectDevice connects a public device-flow authorization with a refresh
// token on the test provider, and returns the provider too.
func connectDevice(b testing.TB) (*env, string, *oauthtest.Provider) {
	p := oauthtest.New(b, oauthtest.Options{DeviceInterval: time.Second})
	e := newEnv(b, b.TempDir(), Config{})
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "bench", Provider: "custom", Flow: FlowDeviceCode, Environment: "development", Endpoints: Endpoints{Issuer: p.URL},
		ClientID: "yett-test", ClientAuth: ClientAuthNone, Scopes: []string{"read"}, Unattended: true, Owner: "o", BackupRevoker: "b",
	})
	if err != nil {
		b.Fatal(err)
	}
	p.ApproveDevice(fv.UserCode)
	done, err := e.m.WaitFlow(context.Background(), fv.ID)
	if err != nil || done.State != FlowConnected {
		b.Fatal(done, err)
	}
	return e, done.AuthorizationID, p
}

// expire forgets the access token everywhere, so the next Acquire refreshes.
func (e *env) expire(id string) {
	e.m.db.Exec(`UPDATE oauth_authorizations SET sealed_access = NULL WHERE id = ?`, id)
	e.m.tokens.dropCache(id)
}

// BenchmarkRefreshWait: the latency one refresh costs its callers, for 1
// caller and for 100 concurrent callers that wait on the same refresh (they
// share one token request). The interleaved run alternates the two on one
// data directory and reports their ratio (x-lone: how many times a lone
// caller's wait the 100 callers' wait is), so that the disk's and the
// machine's drift between the two sub-benchmarks does not enter it.
func BenchmarkRefreshWait(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("callers=%d", n), func(b *testing.B) {
			e, id := benchDevice(b)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				e.expire(id)
				b.StartTimer()
				e.acquireAll(b, id, n)
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		e, id := benchDevice(b)
		var lone, hundred time.Duration
		for range b.N {
			for _, n := range []int{1, 100} {
				e.expire(id)
				start := time.Now()
				e.acquireAll(b, id, n)
				if n == 1 {
					lone += time.Since(start)
				} else {
					hundred += time.Since(start)
				}
			}
		}
		b.ReportMetric(float64(lone.Nanoseconds())/float64(b.N), "lone-ns/op")
		b.ReportMetric(float64(hundred.Nanoseconds())/float64(b.N), "100-ns/op")
		b.ReportMetric(float64(hundred)/float64(lone), "x-lone")
	})
}

// acquireAll has n concurrent callers take a lease on id and release it.
func (e *env) acquireAll(b testing.TB, id string, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			l, err := e.m.Acquire(context.Background(), id, "bench.op")
			if err != nil {
				b.Error(err)
				return
			}
			l.Release(false)
		})
	}
	wg.Wait()
}

// BenchmarkOperationCall: a named operation's cost with a cached access
// token (lease + executor) against a direct call with a static bearer
// secret through the same executor to the same loopback API.
func BenchmarkOperationCall(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }))
	b.Cleanup(api.Close)
	exec := action.New(action.Config{})
	req := action.Request{Method: "GET", URL: api.URL + "/projects/A/issues"}
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		cred := &action.Credential{Injection: action.Injection{Format: action.InjectBearer}, Secret: staticSecret("bench-static-secret")}
		for range b.N {
			if _, err := exec.Do(ctx, req, cred); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("operation-cached-token", func(b *testing.B) {
		e, id := benchDevice(b)
		b.ResetTimer()
		for range b.N {
			l, err := e.m.Acquire(ctx, id, "bench.op")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := exec.Do(ctx, req, l.Credential()); err != nil {
				b.Fatal(err)
			}
			l.Release(true)
		}
	})
}

type staticSecret string

func (s staticSecret) WithSecret(_ context.Context, use func([]byte) error) error {
	return use([]byte(s))
}
