package oauth

import (
	"context"
	"testing"

	"github.com/yettdev/yett/internal/testsupport/hydratest"
)

// TestHydraProbeRevocationLeavesTheTokenInService: an unattended drill's
// probe of a client credentials authorization revokes a fresh access token
// of a grant of its own, which Hydra then reports inactive, while the token
// in service stays active; its refresh check says it holds none.
func TestHydraProbeRevocationLeavesTheTokenInService(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	e := newEnv(t, t.TempDir(), Config{})
	client := h.CreateClient(t, hydratest.ClientSpec{AuthMethod: "client_secret_basic", Secret: "canary-client-secret-9d2e",
		GrantTypes: []string{"client_credentials"}, ResponseTypes: []string{"token"}, Scopes: []string{"tracker.read"}})
	fv, err := e.m.Connect(context.Background(), ConnectRequest{
		Name: "service", Provider: "custom", Flow: FlowClientCredentials, Environment: "staging",
		Endpoints: Endpoints{Issuer: h.Issuer, IntrospectionEndpoint: h.AdminURL + "/admin/oauth2/introspect"},
		ClientID:  client, ClientAuth: ClientAuthSecret, ClientSecret: []byte("canary-client-secret-9d2e"), Scopes: []string{"tracker.read"},
	})
	if err != nil || fv.State != FlowConnected {
		t.Fatalf("connect: %+v %v", fv, err)
	}
	res := newResource(t)
	if err := use(context.Background(), e.m, fv.AuthorizationID, res.URL); err != nil {
		t.Fatal(err)
	}
	inService := res.lastToken()
	p, err := e.m.ProbeRevocation(context.Background(), fv.AuthorizationID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Token != ProbeFreshToken || p.Status != 200 || !p.Introspected || p.Active || p.IntrospectionStatus != 200 {
		t.Fatalf("probe: %+v", p)
	}
	if !h.Introspect(t, inService).Active {
		t.Fatal("the probe revoked the token in service")
	}
	if rc, err := e.m.CheckRefreshToken(context.Background(), fv.AuthorizationID); err != nil || rc.Held {
		t.Fatalf("refresh check of a client credentials authorization: %+v %v", rc, err)
	}
	e.checkNoToken(inService)
}
