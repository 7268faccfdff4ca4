package oauth

import (
	"context"
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
	e.m.dropCache(id)
}

// BenchmarkRefreshWait: the latency one refresh costs its callers, for 1
// caller and for 100 concurrent callers that wait on the same refresh.
// Compare the two ns/op figures: the 100 callers share one token request.
func BenchmarkRefreshWait(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(map[int]string{1: "callers=1", 100: "callers=100"}[n], func(b *testing.B) {
			e, id := benchDevice(b)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				e.expire(id)
				b.StartTimer()
				var wg sync.WaitGroup
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						l, err := e.m.Acquire(ctx, id, "bench.op")
						if err != nil {
							b.Error(err)
							return
						}
						l.Release(false)
					}()
				}
				wg.Wait()
			}
		})
	}
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
