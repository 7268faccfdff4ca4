package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
)

// TestCallbackPortChosenByThePerson: the authorization code flow listens on
// the loopback port the person chose (to forward it over SSH), the
// provider's answer arrives there, and the entries name the front end.
func TestCallbackPortChosenByThePerson(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{})
	e := newEnv(t, t.TempDir(), Config{Surface: "terminal"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	req := ConnectRequest{ClientID: hydraPublicClient(t, h), ClientAuth: ClientAuthNone, Scopes: []string{"openid"},
		Owner: "alice", BackupRevoker: "bob", CallbackPort: port}
	id := connectCode(t, e, h, h.PublicURL, req)
	if id == "" {
		t.Fatal("no authorization")
	}
	var connected bool
	for _, ev := range e.auditEvents() {
		if ev.Type == audit.EventAuthorizationConnected {
			connected = true
			if ev.Surface != "terminal" {
				t.Errorf("authorization_connected with surface %q, want terminal", ev.Surface)
			}
		}
	}
	if !connected {
		t.Fatal("no authorization_connected entry")
	}
	// The redirect the provider was told is the chosen port's.
	f, err := e.m.Connect(context.Background(), ConnectRequest{Name: "again", Provider: "custom", Flow: FlowAuthorizationCode,
		Endpoints: Endpoints{Issuer: h.Issuer, AuthorizationEndpoint: h.PublicURL + "/oauth2/auth", TokenEndpoint: h.PublicURL + "/oauth2/token"},
		ClientID:  req.ClientID, ClientAuth: ClientAuthNone, Environment: "staging", CallbackPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer e.m.CancelFlow(f.ID)
	u, _ := url.Parse(f.AuthorizationURL)
	if got, want := u.Query().Get("redirect_uri"), fmt.Sprintf("http://127.0.0.1:%d/callback", port); got != want {
		t.Errorf("redirect_uri %q, want %q", got, want)
	}
}

func TestCallbackPortRefused(t *testing.T) {
	e := newEnv(t, t.TempDir(), Config{})
	for _, c := range []struct {
		flow string
		port int
	}{{FlowAuthorizationCode, 80}, {FlowAuthorizationCode, 70000}, {FlowDeviceCode, 8080}, {FlowClientCredentials, 8080}} {
		_, err := e.m.Connect(context.Background(), ConnectRequest{Name: "x", Provider: "custom", Flow: c.flow, CallbackPort: c.port,
			Endpoints: Endpoints{TokenEndpoint: "http://127.0.0.1:1/token", AuthorizationEndpoint: "http://127.0.0.1:1/auth"},
			ClientID:  "c", ClientAuth: ClientAuthNone, Environment: "staging"})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "callback port") {
			t.Errorf("%s on port %d: %v, want ErrInvalid naming the callback port", c.flow, c.port, err)
		}
	}
}
