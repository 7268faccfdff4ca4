package oauth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The loopback callback: a request without the flow's state is refused and
// the flow waits on; an iss from another issuer (RFC 9207) or a missing
// one the provider promised ends it; so does a provider error.
func TestCallbackChecks(t *testing.T) {
	e := newEnv(t, t.TempDir(), Config{})
	start := func(requireIss bool) (FlowView, url.Values) {
		t.Helper()
		req := ConnectRequest{Name: "cb", Provider: "custom", Flow: FlowAuthorizationCode, Environment: "development",
			Endpoints: Endpoints{Issuer: "https://issuer.example", AuthorizationEndpoint: "https://issuer.example/auth", TokenEndpoint: "https://issuer.example/token"},
			ClientID:  "c", ClientAuth: ClientAuthNone}
		r, err := e.m.connector.newRow(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		r.RequireIss = requireIss
		fv, err := e.m.connector.start(context.Background(), r, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(fv.AuthorizationURL)
		q := u.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || len(q.Get("state")) < 40 ||
			!strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") || !strings.HasSuffix(q.Get("redirect_uri"), "/callback") {
			t.Fatalf("authorization request: %v", q)
		}
		return fv, q
	}
	hit := func(q url.Values, params url.Values) int {
		t.Helper()
		resp, err := http.Get(q.Get("redirect_uri") + "?" + params.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	wait := func(id string) FlowView {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := e.m.WaitFlow(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	fv, q := start(false)
	if got := hit(q, url.Values{"state": {"forged"}, "code": {"x"}}); got != http.StatusBadRequest {
		t.Fatalf("forged state answered %d", got)
	}
	if v, _ := e.m.Flow(fv.ID); v.State != FlowWaiting {
		t.Fatalf("a forged callback ended the flow: %s", v.State)
	}
	hit(q, url.Values{"state": {q.Get("state")}, "code": {"x"}, "iss": {"https://evil.example"}})
	if v := wait(fv.ID); v.State != FlowFailed || !strings.Contains(v.Error, "RFC 9207") {
		t.Fatalf("wrong iss: %+v", v)
	}

	fv, q = start(true)
	hit(q, url.Values{"state": {q.Get("state")}, "code": {"x"}})
	if v := wait(fv.ID); v.State != FlowFailed || !strings.Contains(v.Error, "iss") {
		t.Fatalf("missing promised iss: %+v", v)
	}

	fv, q = start(false)
	hit(q, url.Values{"state": {q.Get("state")}, "error": {"access_denied"}, "iss": {"https://issuer.example"}})
	if v := wait(fv.ID); v.State != FlowFailed || !strings.Contains(v.Error, "access_denied") {
		t.Fatalf("provider error: %+v", v)
	}

	fv, _ = start(false)
	e.m.CancelFlow(fv.ID)
	if v := wait(fv.ID); v.State != FlowCancelled {
		t.Fatalf("cancel: %+v", v)
	}
	if views, _ := e.m.Authorizations(); len(views) != 0 {
		t.Fatal("a failed flow stored an authorization")
	}
}
