package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/ids"
	"github.com/yettdev/yett/backend/store"
)

// FlowView is a connection flow's state for the UI. It holds no token.
type FlowView struct {
	ID                      string    `json:"id"`
	Flow                    string    `json:"flow"`
	State                   string    `json:"state"` // waiting, connected, failed, cancelled, expired
	AuthorizationURL        string    `json:"authorization_url,omitempty"`
	UserCode                string    `json:"user_code,omitempty"`
	VerificationURI         string    `json:"verification_uri,omitempty"`
	VerificationURIComplete string    `json:"verification_uri_complete,omitempty"`
	ExpiresAt               time.Time `json:"expires_at"`
	AuthorizationID         string    `json:"authorization_id,omitempty"`
	Error                   string    `json:"error,omitempty"`
}

// Flow states.
const (
	FlowWaiting   = "waiting"
	FlowConnected = "connected"
	FlowFailed    = "failed"
	FlowCancelled = "cancelled"
	FlowExpired   = "expired"
)

type flow struct {
	view   FlowView
	cancel context.CancelFunc
	done   chan struct{}
	// name is the new authorization's name while the flow waits: no
	// second connection may take it (empty for a reconnection).
	name string
}

// Connect validates req and starts its flow. The authorization exists only
// once the flow succeeds. The returned view says what the person must do:
// finish in the browser (authorization_url, already opened when the manager
// has OpenBrowser) or enter user_code at verification_uri. Client
// credentials complete before Connect returns.
func (m *Custody) Connect(ctx context.Context, req ConnectRequest) (FlowView, error) {
	if req.CallbackPort != 0 && (req.CallbackPort < 1024 || req.CallbackPort > 65535 || req.Flow != FlowAuthorizationCode) {
		return FlowView{}, fmt.Errorf("%w: a callback port is 1024 to 65535, and only for the authorization code flow", ErrInvalid)
	}
	r, err := m.connector.newRow(ctx, req)
	if err != nil {
		return FlowView{}, err
	}
	return m.connector.start(ctx, r, false, req.CallbackPort)
}

// nameFree refuses a name an authorization or a waiting connection already
// has. It runs before any browser opens or any code is asked for: a name
// refused after the person consented would leave the provider holding a
// grant Yett never kept.
func (m *connector) nameFree(name string) error {
	var n int64
	if err := m.db.Model(&row{}).Where("name = ?", name).Count(&n).Error; err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: an authorization named %q exists: choose another name, or reconnect that one from Connections", ErrInvalid, name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range m.flows {
		if f.name == name && f.view.State == FlowWaiting {
			return fmt.Errorf("%w: a connection named %q is waiting for its sign-in: finish or cancel it first", ErrInvalid, name)
		}
	}
	return nil
}

// Reconnect starts the same flow again for an authorization that needs its
// owner to reconnect, or that was revoked. Only a person calls it, from the
// app.
func (m *Custody) Reconnect(ctx context.Context, id string) (FlowView, error) {
	r, err := loadRow(m.db, id)
	if err != nil {
		return FlowView{}, notFound(err)
	}
	switch r.State {
	case StateActive:
		// Its tokens would be replaced and the old grant left live at the
		// provider with no row (revoking it after the new sign-in could
		// end the new grant too, where the provider ends a whole grant).
		return FlowView{}, fmt.Errorf("%w: it is connected and serving; revoke it first to connect it again", ErrInvalid)
	case StateDisabled, StateSuspended:
		return FlowView{}, fmt.Errorf("%w: a disabled or suspended authorization is not reconnected", ErrInvalid)
	case StateRevoked:
		// A revoked authorization (a full revocation drill ends so) is
		// reconnected by its owner once none of its old tokens waits for
		// the provider: a revocation sent later could end the new grant.
		var waiting int64
		if err := m.db.Raw(`SELECT COUNT(*) FROM oauth_revocations WHERE authorization_id = ?`, id).Scan(&waiting).Error; err != nil {
			return FlowView{}, fmt.Errorf("oauth: %w", err)
		}
		if waiting > 0 {
			return FlowView{}, fmt.Errorf("%w: its old tokens are still waiting to be revoked at the provider; reconnect it once that is done", ErrInvalid)
		}
	}
	if r.StateReason == "vault_reset" && r.ClientAuth != ClientAuthNone {
		return FlowView{}, fmt.Errorf("%w: the vault was reset, so this connection's client secret or key is gone; connect it again as a new authorization", ErrInvalid)
	}
	return m.connector.start(ctx, r, true, 0)
}

// start runs r's flow. reconnect: r exists and gets new tokens. port is
// the authorization code flow's loopback port, 0 for any.
func (m *connector) start(ctx context.Context, r *row, reconnect bool, port int) (FlowView, error) {
	fctx, cancel := context.WithTimeout(m.ctx, m.cfg.FlowTimeout)
	f := &flow{cancel: cancel, done: make(chan struct{}), view: FlowView{
		ID: ids.Sized("fl-", 9), Flow: r.CreatedHow, State: FlowWaiting, ExpiresAt: m.now().Add(m.cfg.FlowTimeout).UTC(),
	}}
	if !reconnect {
		f.name = r.Name
	}
	conf, err := m.tokens.config(r, "")
	if err != nil {
		cancel()
		return FlowView{}, err
	}
	switch r.CreatedHow {
	case FlowClientCredentials:
		defer cancel()
		tctx, err := m.tokens.tokenContext(fctx, r, nil)
		if err != nil {
			return FlowView{}, err
		}
		tok, err := m.clientCredentials(tctx, r, conf)
		if err == nil {
			err = checkToken(tok, r.DPoP)
		}
		if err != nil {
			return FlowView{}, flowError(err)
		}
		if err := m.finish(ctx, r, tok, reconnect); err != nil {
			return FlowView{}, m.abandon(ctx, r, tok, err)
		}
		f.view.State, f.view.AuthorizationID = FlowConnected, r.ID
		close(f.done)
		m.mu.Lock()
		m.flows[f.view.ID] = f
		m.mu.Unlock()
		return f.view, nil
	case FlowAuthorizationCode:
		if err := m.startCode(fctx, f, r, conf, reconnect, port); err != nil {
			cancel()
			return FlowView{}, err
		}
	case FlowDeviceCode:
		if err := m.startDevice(fctx, f, r, conf, reconnect); err != nil {
			cancel()
			return FlowView{}, err
		}
	}
	m.mu.Lock()
	m.flows[f.view.ID] = f
	m.mu.Unlock()
	m.changed()
	return f.view, nil
}

// flowError keeps a flow failure to an RFC 6749 error code.
func flowError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" && re.Response != nil {
			code = fmt.Sprintf("http_%d", re.Response.StatusCode)
		}
		return fmt.Errorf("%w: the provider answered %s", ErrFlow, safeCode(code))
	}
	if errors.Is(err, ErrProvider) || errors.Is(err, ErrInvalid) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: it timed out", ErrFlow)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: it was cancelled", ErrFlow)
	}
	return fmt.Errorf("%w: the provider could not be reached", ErrFlow)
}

func (m *connector) clientCredentials(ctx context.Context, r *row, conf *oauth2.Config) (*oauth2.Token, error) {
	cc := clientcredentials.Config{
		ClientID: conf.ClientID, ClientSecret: conf.ClientSecret, TokenURL: conf.Endpoint.TokenURL,
		Scopes: conf.Scopes, AuthStyle: conf.Endpoint.AuthStyle,
	}
	return cc.Token(ctx)
}

func authOptions(r *row) []oauth2.AuthCodeOption {
	var opts []oauth2.AuthCodeOption
	if r.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", r.Resource))
	}
	if r.AuthParams != "" {
		var p map[string]string
		json.Unmarshal([]byte(r.AuthParams), &p)
		for k, v := range p {
			opts = append(opts, oauth2.SetAuthURLParam(k, v))
		}
	}
	return opts
}

// startCode listens on 127.0.0.1 with an ephemeral port (RFC 8252 §7.3),
// or the one the person chose, and returns the authorization URL with PKCE
// S256 and a random state.
func (m *connector) startCode(ctx context.Context, f *flow, r *row, conf *oauth2.Config, reconnect bool, port int) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("%w: no loopback port for the redirect: %v", ErrFlow, err)
	}
	conf.RedirectURL = fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	verifier := oauth2.GenerateVerifier()
	stateBytes := make([]byte, 32)
	rand.Read(stateBytes)
	state := base64.RawURLEncoding.EncodeToString(stateBytes)
	opts := append(authOptions(r), oauth2.S256ChallengeOption(verifier))
	f.view.AuthorizationURL = conf.AuthCodeURL(state, opts...)

	results := make(chan error, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/callback" {
			http.NotFound(w, req)
			return
		}
		q := req.URL.Query()
		// A request without our state is not the provider's answer to this
		// flow (another page, or a forged callback): refuse it and wait on.
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			http.Error(w, "Yett: this sign-in answer does not belong to the connection in progress.", http.StatusBadRequest)
			return
		}
		err := m.callback(ctx, r, conf, verifier, q, reconnect)
		page(w, r.Name, err)
		select {
		case results <- err:
		default:
		}
	})
	go srv.Serve(ln)
	go func() {
		var err error
		select {
		case err = <-results:
		case <-ctx.Done():
			err = ctx.Err()
		}
		// Let the browser get its page before the listener goes.
		shut, c := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(shut)
		c()
		m.endFlow(f, r, err)
	}()
	if m.cfg.OpenBrowser != nil {
		m.cfg.OpenBrowser(f.view.AuthorizationURL)
	}
	return nil
}

// callback checks the provider's answer (RFC 9207 iss, error) and
// exchanges the code with the PKCE verifier.
func (m *connector) callback(ctx context.Context, r *row, conf *oauth2.Config, verifier string, q url.Values, reconnect bool) error {
	iss, hasIss := q["iss"]
	switch {
	case hasIss && (r.Issuer == "" || len(iss) != 1 || iss[0] != r.Issuer):
		return fmt.Errorf("%w: the answer came from another issuer (RFC 9207 iss mismatch)", ErrFlow)
	case !hasIss && r.RequireIss:
		return fmt.Errorf("%w: the provider promised an iss parameter and sent none (RFC 9207)", ErrFlow)
	}
	if e := q.Get("error"); e != "" {
		return fmt.Errorf("%w: the provider answered %s", ErrFlow, safeCode(e))
	}
	code := q.Get("code")
	if code == "" {
		return fmt.Errorf("%w: the answer has no authorization code", ErrFlow)
	}
	tctx, err := m.tokens.tokenContext(ctx, r, nil)
	if err != nil {
		return err
	}
	tok, err := conf.Exchange(tctx, code, oauth2.VerifierOption(verifier))
	if err == nil {
		err = checkToken(tok, r.DPoP)
	}
	if err != nil {
		return flowError(err)
	}
	if err := m.finish(ctx, r, tok, reconnect); err != nil {
		return m.abandon(ctx, r, tok, err)
	}
	return nil
}

func page(w http.ResponseWriter, name string, err error) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	msg := "Yett connected " + html.EscapeString(name) + ". You can close this tab."
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		msg = "Yett could not connect " + html.EscapeString(name) + ": " + html.EscapeString(err.Error()) + ". You can close this tab and try again from Yett."
	}
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>Yett</title><p style=\"font-family:sans-serif\">%s</p>", msg)
}

// startDevice asks for a device code (RFC 8628 §3.1) and polls for the
// token in the background.
func (m *connector) startDevice(ctx context.Context, f *flow, r *row, conf *oauth2.Config, reconnect bool) error {
	tctx, err := m.tokens.tokenContext(ctx, r, nil)
	if err != nil {
		return err
	}
	da, err := conf.DeviceAuth(tctx, authOptions(r)...)
	if err != nil {
		return flowError(err)
	}
	f.view.UserCode, f.view.VerificationURI, f.view.VerificationURIComplete = da.UserCode, da.VerificationURI, da.VerificationURIComplete
	if !da.Expiry.IsZero() && da.Expiry.Before(f.view.ExpiresAt) {
		f.view.ExpiresAt = da.Expiry.UTC()
	}
	go func() {
		tok, err := conf.DeviceAccessToken(tctx, da)
		if err == nil {
			err = checkToken(tok, r.DPoP)
		}
		if err == nil {
			if err = m.finish(ctx, r, tok, reconnect); err != nil {
				err = m.abandon(ctx, r, tok, err)
			}
		} else {
			err = flowError(err)
		}
		m.endFlow(f, r, err)
	}()
	return nil
}

func (m *connector) endFlow(f *flow, r *row, err error) {
	m.mu.Lock()
	switch {
	case err == nil:
		f.view.State, f.view.AuthorizationID = FlowConnected, r.ID
	case f.view.State == FlowCancelled:
	case errors.Is(err, context.DeadlineExceeded):
		f.view.State, f.view.Error = FlowExpired, "the connection was not completed in time"
	case errors.Is(err, context.Canceled):
		f.view.State = FlowCancelled
	default:
		f.view.State, f.view.Error = FlowFailed, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "oauth: "), "the connection flow failed: ")
	}
	f.view.AuthorizationURL = "" // holds state and a PKCE challenge; no longer useful
	m.mu.Unlock()
	f.cancel()
	select {
	case <-f.done:
	default:
		close(f.done)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		m.log.Info("a connection flow ended without connecting", "flow", f.view.ID, "state", f.view.State)
	}
	m.changed()
}

// Flow returns a flow's state.
func (m *Custody) Flow(id string) (FlowView, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.connector.flows[id]
	if !ok {
		return FlowView{}, false
	}
	return f.view, true
}

// WaitFlow blocks until the flow ends or ctx does.
func (m *Custody) WaitFlow(ctx context.Context, id string) (FlowView, error) {
	m.mu.Lock()
	f, ok := m.connector.flows[id]
	m.mu.Unlock()
	if !ok {
		return FlowView{}, ErrNotFound
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return FlowView{}, ctx.Err()
	}
	v, _ := m.Flow(id)
	return v, nil
}

// CancelFlow ends a waiting flow; nothing is stored.
func (m *Custody) CancelFlow(id string) {
	m.mu.Lock()
	f, ok := m.connector.flows[id]
	if ok && f.view.State == FlowWaiting {
		f.view.State = FlowCancelled
	}
	m.mu.Unlock()
	if ok {
		f.cancel()
	}
}

func (m *connector) cancelFlows(why string) {
	m.mu.Lock()
	var fs []*flow
	for _, f := range m.flows {
		if f.view.State == FlowWaiting {
			f.view.State, f.view.Error = FlowCancelled, why
			fs = append(fs, f)
		}
	}
	m.mu.Unlock()
	for _, f := range fs {
		f.cancel()
	}
}

// finish stores a new authorization (or a reconnected one's new tokens)
// and records it. The refresh token is kept only for unattended
// connections.
func (m *connector) finish(ctx context.Context, r *row, tok *oauth2.Token, reconnect bool) error {
	gen := r.Generation + 1
	if !reconnect {
		gen = 1
	}
	r.AccountRef = accountRef(tok, r)
	r.Scopes = r.RequestedScopes
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		r.Scopes = strings.Join(strings.Fields(s), " ")
	}
	now := m.now()
	t := &accessToken{gen: gen, value: newTokenValue(tok.AccessToken), typ: tokenType(r.DPoP), expiry: tok.Expiry}
	sa, err := m.tokens.sealAccess(r.ID, gen, t)
	if err != nil {
		return err
	}
	var sr []byte
	if r.Unattended && tok.RefreshToken != "" && r.CreatedHow != FlowClientCredentials {
		if sr, err = m.vault.SealBlob(purposeToken, tokenAD(r.ID, "refresh", gen), []byte(tok.RefreshToken)); err != nil {
			return err
		}
	}
	r.Generation, r.SealedAccess, r.SealedRefresh, r.AccessExpiry = gen, sa, sr, store.UnixSeconds(tok.Expiry)
	r.ConnectedAt, r.State, r.StateReason, r.RefreshInFlight = now.Unix(), StateActive, "", 0
	if reconnect {
		err = m.db.Model(&row{}).Where("id = ?", r.ID).Updates(map[string]any{
			"generation": gen, "sealed_access": sa, "sealed_refresh": sr, "access_expiry": r.AccessExpiry,
			"connected_at": r.ConnectedAt, "state": StateActive, "state_reason": "", "refresh_in_flight": 0,
			"account_ref": r.AccountRef, "scopes": r.Scopes,
		}).Error
	} else {
		err = m.db.Create(r).Error
	}
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return fmt.Errorf("%w: an authorization with this name exists", ErrInvalid)
		}
		return fmt.Errorf("oauth: storing the authorization: %w", err)
	}
	m.tokens.keep(r.ID, t)
	m.record(ctx, audit.EventAuthorizationConnected, r, "connect", "", true, "")
	m.changed()
	return nil
}

// accountRef names the connected account from the ID token's claims when
// there is one (it came straight from the token endpoint over TLS, OpenID
// Connect Core §3.1.3.7), else from the response's own fields.
func accountRef(tok *oauth2.Token, r *row) string {
	if r.CreatedHow == FlowClientCredentials {
		return "client " + r.ClientID
	}
	if raw, ok := tok.Extra("id_token").(string); ok && raw != "" {
		claims := jwt.MapClaims{}
		if _, _, err := jwt.NewParser().ParseUnverified(raw, claims); err == nil {
			for _, k := range []string{"email", "preferred_username", "sub"} {
				if v, ok := claims[k].(string); ok && v != "" {
					return clip(v, 256)
				}
			}
		}
	}
	for _, k := range []string{"user_id", "login", "team_id"} {
		if v, ok := tok.Extra(k).(string); ok && v != "" {
			return clip(v, 256)
		}
	}
	return ""
}
