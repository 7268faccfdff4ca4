package app

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/internal/testsupport/oauthtest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

const (
	oauthPassphrase = "correct horse battery staple"
	oauthCanary     = "CANARY-oauth-client-secret-5b1d"
)

// oauthApp is the desktop app as Wails runs it, minus the window: its vault
// in a temp dir, the gateway and the OAuth manager started by the vault's
// lifecycle, and every event the UI would get.
type oauthApp struct {
	*App
	rec  *recorder
	logs *syncbuf.Buffer
	// shown is every value the UI was handed, to check none carries a secret.
	shown []any
}

func newOAuthApp(t *testing.T) *oauthApp {
	t.Helper()
	base := t.TempDir()
	logs := &syncbuf.Buffer{}
	a, err := New(Config{
		DataDir:    filepath.Join(base, "data"),
		RuntimeDir: filepath.Join(base, "run"),
		Log:        slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	o := &oauthApp{App: a, rec: &recorder{}, logs: logs}
	a.events.attach(o.rec.emit)
	t.Cleanup(a.Close)
	return o
}

// create sets the vault up and waits for the manager it brings.
func (o *oauthApp) create(t *testing.T) {
	t.Helper()
	if _, err := o.Vault.Create(oauthPassphrase, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := o.OAuth.manager(); return err == nil })
}

func (o *oauthApp) show(v any) { o.shown = append(o.shown, v) }

// noSecret fails if the secret is in anything the UI was handed, in an
// event, or in the log.
func (o *oauthApp) noSecret(t *testing.T, secret string) {
	t.Helper()
	for i, v := range o.shown {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("returned value %d (%T) carries the client secret", i, v)
		}
	}
	if strings.Contains(o.rec.all(), secret) {
		t.Error("an event carries the client secret")
	}
	if strings.Contains(o.logs.String(), secret) {
		t.Error("the log carries the client secret")
	}
}

// flowEvents are the FlowViews pushed as EventOAuthFlow so far.
func (o *oauthApp) flowEvents(t *testing.T) []FlowView {
	t.Helper()
	o.rec.mu.Lock()
	defer o.rec.mu.Unlock()
	var out []FlowView
	for _, e := range o.rec.events {
		payload, ok := strings.CutPrefix(e, EventOAuthFlow+" ")
		if !ok {
			continue
		}
		var f FlowView
		if err := json.Unmarshal([]byte(payload), &f); err != nil {
			t.Fatalf("flow event %q: %v", payload, err)
		}
		out = append(out, f)
	}
	return out
}

func (o *oauthApp) waitFlowEvent(t *testing.T, flowID, state string) FlowView {
	t.Helper()
	var got FlowView
	waitFor(t, func() bool {
		for _, f := range o.flowEvents(t) {
			if f.FlowID == flowID && f.State == state {
				got = f
				return true
			}
		}
		return false
	})
	return got
}

func (o *oauthApp) countEvents(name string) int {
	return strings.Count("\n"+o.rec.all(), "\n"+name)
}

func (o *oauthApp) only(t *testing.T) AuthorizationView {
	t.Helper()
	list, err := o.OAuth.Authorizations()
	if err != nil {
		t.Fatal(err)
	}
	o.show(list)
	if len(list) != 1 {
		t.Fatalf("%d authorizations, want 1: %+v", len(list), list)
	}
	return list[0]
}

func clientCredentialsForm(p *oauthtest.Provider, secret string) ConnectForm {
	return ConnectForm{
		Name: "ci robot", Provider: "custom", Issuer: p.URL, ClientID: oauthtest.DefaultClientID,
		ClientAuth: "client_secret", ClientSecret: secret, Scopes: []string{"read"},
		Environment: "development", Flow: "client_credentials",
	}
}

// TestOAuthServiceClientCredentialsLifecycle walks one authorization from
// connect to revoke through the bound service, against a real provider:
// discovery, client credentials, the inventory flags and their fix,
// operations, and the three revocation steps.
func TestOAuthServiceClientCredentialsLifecycle(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: oauthCanary})
	o := newOAuthApp(t)
	if _, err := o.OAuth.Authorizations(); err == nil || err.Error() != errNoOAuth.Error() {
		t.Fatalf("before the vault exists: %v, want %q", err, errNoOAuth)
	}
	presets, err := o.OAuth.Presets()
	if err != nil || !slices.ContainsFunc(presets, func(p PresetView) bool { return p.ID == "github" && p.Name != "" }) {
		t.Fatalf("presets without a vault: %v %+v", err, presets)
	}
	o.show(presets)
	o.create(t)

	d, err := o.OAuth.Discover(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	o.show(d)
	if d.Issuer != p.URL || d.TokenEndpoint != p.URL+"/token" || d.RevocationEndpoint != p.URL+"/revoke" ||
		!d.DPoP || !reflect.DeepEqual(d.AuthMethods, []string{"client_secret_basic"}) || d.AuthorizationEndpoint != "" {
		t.Fatalf("discovery: %+v", d)
	}

	changedBefore := o.countEvents(EventOAuthChanged)
	f, err := o.OAuth.Connect(clientCredentialsForm(p, oauthCanary))
	if err != nil {
		t.Fatal(err)
	}
	o.show(f)
	if f.State != "connected" || f.Flow != "client_credentials" || f.AuthorizationID == "" || f.FlowID == "" || f.Error != "" {
		t.Fatalf("flow: %+v", f)
	}
	if ev := o.waitFlowEvent(t, f.FlowID, "connected"); ev.AuthorizationID != f.AuthorizationID {
		t.Fatalf("flow event %+v for flow %+v", ev, f)
	}
	waitFor(t, func() bool { return o.countEvents(EventOAuthChanged) > changedBefore })

	a := o.only(t)
	if a.ID != f.AuthorizationID || a.Name != "ci robot" || a.Provider != "custom" || a.ProviderHost != strings.TrimPrefix(p.URL, "http://") ||
		a.AccountRef != "client "+oauthtest.DefaultClientID || !reflect.DeepEqual(a.Scopes, []string{"read"}) ||
		a.State != "active" || a.Revocation != "none" || a.CreatedHow != "client_credentials" || a.ClientAuth != "client_secret" {
		t.Fatalf("authorization: %+v", a)
	}
	// The owner inventory sets a review date 90 days after the connection.
	connected, err := time.Parse(time.RFC3339, a.ConnectedAt)
	if err != nil || a.LastUsed != "" {
		t.Fatalf("times: connected %q used %q", a.ConnectedAt, a.LastUsed)
	}
	if review, err := time.Parse(time.RFC3339, a.ReviewBy); err != nil || review.Sub(connected) != 90*24*time.Hour {
		t.Fatalf("default review date %q for a connection at %q", a.ReviewBy, a.ConnectedAt)
	}
	if a.Controlled || !slices.ContainsFunc(a.Problems, func(s string) bool { return strings.HasPrefix(s, "no owner") }) ||
		!slices.ContainsFunc(a.Problems, func(s string) bool { return strings.HasPrefix(s, "no backup revoker") }) {
		t.Fatalf("an authorization without owner or backup revoker must be flagged: controlled=%v problems=%q", a.Controlled, a.Problems)
	}

	if err := o.OAuth.UpdateInventory(a.ID, InventoryForm{Owner: "alice@example.com", ReviewBy: "1/2/2030"}); err == nil || !strings.Contains(err.Error(), "YYYY-MM-DD") {
		t.Fatalf("bad review date: %v", err)
	}
	if err := o.OAuth.UpdateInventory("az-nope", InventoryForm{Owner: "alice@example.com"}); err == nil || err.Error() != "There is no such authorization." {
		t.Fatalf("unknown authorization: %v", err)
	}
	if err := o.OAuth.UpdateInventory(a.ID, InventoryForm{
		Owner: "alice@example.com", BackupRevoker: "bob@example.com", ReviewBy: "2030-01-31", DisableProcedure: "Revoke in Yett, then rotate the client secret.",
	}); err != nil {
		t.Fatal(err)
	}
	a = o.only(t)
	if !a.Controlled || len(a.Problems) != 0 || a.Owner != "alice@example.com" || a.BackupRevoker != "bob@example.com" ||
		a.ReviewBy != "2030-01-31T00:00:00Z" || a.DisableProcedure != "Revoke in Yett, then rotate the client secret." {
		t.Fatalf("after the inventory fix: %+v", a)
	}

	list := OperationView{
		Name: "tracker.list_items", AuthorizationID: a.ID, Description: "List items by state", Method: "GET",
		URLTemplate: p.URL + "/resource", Approval: "session",
		Params: []ParamView{{Name: "state", Type: "string", Allowed: []string{"open", "closed"}, Required: true}},
	}
	create := OperationView{
		Name: "tracker.create_item", AuthorizationID: a.ID, Method: "POST", URLTemplate: p.URL + "/resource/{project}",
		Approval: "per_call", BodySchema: `{"type":"object","properties":{"title":{"type":"string","maxLength":80}},"required":["title"]}`,
		Params: []ParamView{{Name: "project", Type: "integer", Allowed: []string{}, Required: true}},
	}
	for _, op := range []OperationView{list, create} {
		if err := o.OAuth.SaveOperation(op); err != nil {
			t.Fatalf("save %s: %v", op.Name, err)
		}
	}
	ops, err := o.OAuth.Operations()
	if err != nil {
		t.Fatal(err)
	}
	o.show(ops)
	if want := []OperationView{create, list}; !reflect.DeepEqual(ops, want) {
		t.Fatalf("operations round trip:\n got %+v\nwant %+v", ops, want)
	}
	if a = o.only(t); !reflect.DeepEqual(a.Operations, []string{"tracker.create_item", "tracker.list_items"}) {
		t.Fatalf("operations on the row: %q", a.Operations)
	}
	bad := list
	bad.BodySchema = "{not json"
	bad.Method = "POST"
	if err := o.OAuth.SaveOperation(bad); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("bad body schema: %v", err)
	}
	bad = list
	bad.Name = "Tracker List"
	if err := o.OAuth.SaveOperation(bad); err == nil || !strings.HasPrefix(err.Error(), "Operation name must look like") {
		t.Fatalf("bad operation name: %v", err)
	}
	if err := o.OAuth.RemoveOperation("tracker.create_item"); err != nil {
		t.Fatal(err)
	}
	if err := o.OAuth.RemoveOperation("tracker.create_item"); err == nil || err.Error() != "There is no operation by that name." {
		t.Fatalf("removing twice: %v", err)
	}

	if s, err := o.OAuth.Settings(); err != nil || s.BlockUncontrolled {
		t.Fatalf("default settings: %+v %v", s, err)
	}
	if err := o.OAuth.SetBlockUncontrolled(true); err != nil {
		t.Fatal(err)
	}
	if s, err := o.OAuth.Settings(); err != nil || !s.BlockUncontrolled {
		t.Fatalf("after SetBlockUncontrolled(true): %+v %v", s, err)
	}

	key, err := o.OAuth.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	o.show(key)
	if !strings.HasPrefix(key.KeyID, "ck-") || !strings.Contains(key.JWKS, key.PublicJWK) || strings.Contains(key.PublicJWK, `"d"`) {
		t.Fatalf("client key: %+v", key)
	}

	rep, err := o.OAuth.Revoke(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	o.show(rep)
	var steps []string
	for _, st := range rep.Steps {
		steps = append(steps, st.Step)
		if !st.OK || st.Detail == "" {
			t.Errorf("step %+v did not succeed", st)
		}
		if _, err := time.Parse(time.RFC3339, st.At); err != nil {
			t.Errorf("step time %q", st.At)
		}
	}
	if rep.AuthorizationID != a.ID || rep.RetryPending || !reflect.DeepEqual(steps, []string{"local_disable", "provider_revocation", "verification"}) {
		t.Fatalf("revoke report: %+v", rep)
	}
	if a = o.only(t); a.State != "revoked" || a.Revocation != "done" {
		t.Fatalf("after revoke: state %q revocation %q", a.State, a.Revocation)
	}

	// The manager wrote into the app's audit log, under the running gateway.
	types := activityTypes(t, o.Audit)
	for _, want := range []string{"authorization_connected", "authorization_disabled", "authorization_revoked"} {
		if !slices.ContainsFunc(types, func(s string) bool { return strings.HasPrefix(s, want+":") }) {
			t.Errorf("audit trail %v has no %s", types, want)
		}
	}
	o.noSecret(t, oauthCanary)
}

// TestOAuthServiceRefusesBadInput: a form the backend cannot use is refused
// with a sentence for a person, which never quotes the secret.
func TestOAuthServiceRefusesBadInput(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: oauthCanary})
	o := newOAuthApp(t)
	o.create(t)
	good := clientCredentialsForm(p, oauthCanary)
	for _, tc := range []struct {
		name string
		edit func(*ConnectForm)
		want string
	}{
		{"no name", func(f *ConnectForm) { f.Name = " " }, "Name must be"},
		{"no provider", func(f *ConnectForm) { f.Provider = "" }, "Choose a provider"},
		{"unknown provider", func(f *ConnectForm) { f.Provider = "myspace" }, "Choose a provider"},
		{"password grant", func(f *ConnectForm) { f.Flow = "password" }, "Flow must be authorization_code, client_credentials or device_code (the password grant is not offered)."},
		{"no environment", func(f *ConnectForm) { f.Environment = "" }, "Environment must be development, staging or production."},
		{"public client credentials", func(f *ConnectForm) { f.ClientAuth, f.ClientSecret = "none", "" }, "Client credentials need client authentication"},
		{"secret of a public client", func(f *ConnectForm) { f.ClientAuth = "none"; f.Flow = "device_code" }, "A public client (no client authentication) has no secret."},
		{"bad review date", func(f *ConnectForm) { f.ReviewBy = "next year" }, "YYYY-MM-DD"},
		{"bad scope", func(f *ConnectForm) { f.Scopes = []string{`re"ad`} }, "A scope may contain only"},
		{"plain http endpoint", func(f *ConnectForm) { f.Issuer, f.TokenEndpoint = "", "http://tokens.example.com/token" }, "endpoint is not https"},
		{"no such issuer", func(f *ConnectForm) { f.Issuer = "http://127.0.0.1:1" }, "Discovery failed"},
		{"wrong secret", func(f *ConnectForm) { f.ClientSecret = oauthCanary + "-wrong" }, "The connection flow failed: the provider answered invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := good
			tc.edit(&f)
			v, err := o.OAuth.Connect(f)
			if err == nil {
				t.Fatalf("accepted: %+v", v)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to say %q", err, tc.want)
			}
			if strings.HasPrefix(err.Error(), "oauth:") || strings.Contains(err.Error(), oauthCanary) {
				t.Fatalf("error not written for a person, or quoting the secret: %q", err)
			}
			o.show(err.Error())
		})
	}
	if list, err := o.OAuth.Authorizations(); err != nil || len(list) != 0 {
		t.Fatalf("a refused connect stored something: %+v %v", list, err)
	}
	if _, err := o.OAuth.Discover("ftp://example.com"); err == nil || strings.HasPrefix(err.Error(), "oauth") {
		t.Fatalf("discover of a bad issuer: %v", err)
	}
	if _, err := o.OAuth.Revoke("az-nope"); err == nil || err.Error() != "There is no such authorization." {
		t.Fatalf("revoke of an unknown authorization: %v", err)
	}
	if !strings.Contains(good.String(), "REDACTED") || strings.Contains(good.String(), oauthCanary) {
		t.Fatalf("ConnectForm prints as %q", good.String())
	}
	o.cfg.Log.Info("form", "form", good)
	o.noSecret(t, oauthCanary)
}

// TestOAuthServiceDeviceFlowEvents: a device flow returns while it waits,
// and its end (approved at the provider, or cancelled in the app) reaches
// the UI as an EventOAuthFlow without polling.
func TestOAuthServiceDeviceFlowEvents(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{DeviceInterval: 100 * time.Millisecond})
	o := newOAuthApp(t)
	o.create(t)
	form := ConnectForm{
		Name: "laptop cli", Provider: "custom", ClientID: oauthtest.DefaultClientID, ClientAuth: "none",
		TokenEndpoint: p.URL + "/token", DeviceAuthorizationEndpoint: p.URL + "/device_authorization",
		RevocationEndpoint: p.URL + "/revoke", IntrospectionEndpoint: p.URL + "/introspect",
		Scopes: []string{"read"}, Environment: "staging", Flow: "device_code",
		Owner: "alice@example.com", BackupRevoker: "bob@example.com", ReviewBy: "2031-06-30",
	}
	f, err := o.OAuth.Connect(form)
	if err != nil {
		t.Fatal(err)
	}
	if f.State != "waiting" || f.Flow != "device_code" || f.UserCode == "" || !strings.HasPrefix(f.VerificationURI, p.URL) || f.AuthorizationID != "" {
		t.Fatalf("waiting device flow: %+v", f)
	}
	if exp, err := time.Parse(time.RFC3339, f.ExpiresAt); err != nil || !exp.After(time.Now()) {
		t.Fatalf("expiresAt %q", f.ExpiresAt)
	}
	if got, err := o.OAuth.Flow(f.FlowID); err != nil || got.State != "waiting" || got.UserCode != f.UserCode {
		t.Fatalf("Flow: %+v %v", got, err)
	}
	if err := p.ApproveDevice(f.UserCode); err != nil {
		t.Fatal(err)
	}
	done := o.waitFlowEvent(t, f.FlowID, "connected")
	if done.AuthorizationID == "" || done.UserCode != f.UserCode {
		t.Fatalf("connected event: %+v", done)
	}
	a := o.only(t)
	if a.ID != done.AuthorizationID || a.State != "active" || a.Unattended || a.ReviewBy != "2031-06-30T00:00:00Z" || a.Environment != "staging" {
		t.Fatalf("device authorization: %+v", a)
	}
	// The test provider names no account for a device grant: the owner
	// inventory holds such a row not under control, and the card says why.
	if a.Controlled || !slices.Equal(a.Problems, []string{"the provider did not say which account was connected"}) {
		t.Fatalf("device authorization without an account: controlled=%v problems=%q", a.Controlled, a.Problems)
	}

	// An authorization in service is not reconnected: its old grant would
	// stay live at the provider with no row. Revoked, it is.
	if _, err := o.OAuth.Reconnect(a.ID); err == nil || !strings.Contains(err.Error(), "revoke it first") {
		t.Fatalf("reconnecting an active authorization: %v", err)
	}
	if _, err := o.OAuth.Revoke(a.ID); err != nil {
		t.Fatal(err)
	}
	// Reconnecting starts the same flow again; cancelling it in the app ends
	// it, and the UI hears so.
	r, err := o.OAuth.Reconnect(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != "waiting" || r.FlowID == f.FlowID || r.UserCode == "" {
		t.Fatalf("reconnect flow: %+v", r)
	}
	if err := o.OAuth.CancelFlow(r.FlowID); err != nil {
		t.Fatal(err)
	}
	o.waitFlowEvent(t, r.FlowID, "cancelled")
	if got, err := o.OAuth.Flow(r.FlowID); err != nil || got.State != "cancelled" {
		t.Fatalf("after cancel: %+v %v", got, err)
	}
	if _, err := o.OAuth.Flow("fl-nope"); err == nil || !strings.Contains(err.Error(), "no such connection flow") {
		t.Fatalf("unknown flow: %v", err)
	}
	if err := o.OAuth.CancelFlow("fl-nope"); err == nil {
		t.Fatal("cancelling an unknown flow succeeded")
	}
	if a := o.only(t); a.State != "revoked" {
		t.Fatalf("a cancelled reconnect changed the authorization: %+v", a)
	}
	if u, err := url.Parse(f.VerificationURI); err != nil || u.Host == "" {
		t.Fatalf("verificationUri %q", f.VerificationURI)
	}
}

// TestOAuthServiceFollowsTheVault: the manager exists while the app's audit
// log is open; a vault reset closes it (the UI is told to set up the vault
// again) and the next Create brings a new one on the new log.
func TestOAuthServiceFollowsTheVault(t *testing.T) {
	o := newOAuthApp(t)
	o.create(t)
	// The gateway starts right after the manager; from then on the manager
	// names it in its audit events.
	waitFor(t, func() bool { return o.keeper.State().SocketPath != "" })
	first, _ := o.OAuth.manager()
	if _, err := o.OAuth.Authorizations(); err != nil {
		t.Fatal(err)
	}
	o.vault.Lock("test")
	if err := o.vault.Reset(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := o.OAuth.manager(); return err != nil })
	for name, call := range map[string]func() error{
		"Authorizations": func() error { _, err := o.OAuth.Authorizations(); return err },
		"Operations":     func() error { _, err := o.OAuth.Operations(); return err },
		"Settings":       func() error { _, err := o.OAuth.Settings(); return err },
		"NewClientKey":   func() error { _, err := o.OAuth.NewClientKey(); return err },
		"Revoke":         func() error { _, err := o.OAuth.Revoke("az-x"); return err },
		"Connect":        func() error { _, err := o.OAuth.Connect(ConnectForm{Provider: "custom"}); return err },
	} {
		if err := call(); err == nil || err.Error() != "Set up and unlock the vault first." {
			t.Errorf("%s after reset: %v", name, err)
		}
	}
	o.create(t)
	if second, _ := o.OAuth.manager(); second == first {
		t.Fatal("the manager of the reset vault is still in use")
	}
}
