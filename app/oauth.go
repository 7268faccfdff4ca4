package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/oauth/providers"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
)

// Events about OAuth custody. EventOAuthChanged has no payload: the UI
// re-reads what it shows. EventOAuthFlow carries a FlowView whenever a
// connection flow the person started ends.
const (
	EventOAuthChanged = "oauth:changed"
	EventOAuthFlow    = "oauth:flow"
)

// Time limits of the calls that reach a provider from the UI.
const (
	discoverTimeout = 15 * time.Second
	connectTimeout  = 60 * time.Second // discovery and a client-credentials token
	revokeTimeout   = 60 * time.Second
)

// errNoOAuth is what the UI is told while there is no manager: it needs the
// vault's audit key, so it exists from the vault's creation on.
var errNoOAuth = shown("Set up and unlock the vault first.")

// OAuthService is bound to the UI as window.go.app.OAuthService. It lets a
// person connect accounts, keep their owner inventory, define the named
// operations agents may call, and revoke. It wraps the app's oauth.Custody
// and operation catalogue and hands out redacted views only: no token, client secret or private key
// ever crosses to the UI (the manager has no method that returns one), and
// the client secret of ConnectForm only travels inward.
//
// Until the manager is attached (the vault exists and its audit log is
// open) every method that needs it is refused with chosen text.
type OAuthService struct {
	events *eventSink
	log    *slog.Logger
	// inventory holds who answers for each authorization and the
	// block-uncontrolled switch (oauth_inventory.go).
	inventory *InventoryService

	mu      sync.Mutex
	m       *oauth.Custody
	ops     *operation.Catalogue
	cancel  func()             // the manager's and the catalogue's subscriptions
	waiters context.Context    // ends the flow watchers of the attached manager
	stopW   context.CancelFunc // cancels waiters

	announce *announcer // EventOAuthChanged
}

func newOAuthService(events *eventSink, log *slog.Logger) *OAuthService {
	s := &OAuthService{events: events, log: log}
	s.announce = newAnnouncer(0, func() { s.events.send(EventOAuthChanged, nil) })
	s.waiters, s.stopW = context.WithCancel(context.Background())
	return s
}

// changed is the manager's and the catalogue's subscription.
func (s *OAuthService) changed() { s.announce.changed() }

// attach serves m and its catalogue ops from now on (nil, nil detaches).
// The caller owns both and closes them; flows being watched for the
// previous manager are no longer reported.
func (s *OAuthService) attach(m *oauth.Custody, ops *operation.Catalogue) {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	s.stopW()
	s.waiters, s.stopW = context.WithCancel(context.Background())
	s.m, s.ops = m, ops
	if m != nil {
		unsubM := m.Subscribe(func(oauth.Event) { s.changed() })
		unsubOps := ops.Subscribe(s.changed)
		s.cancel = func() { unsubM(); unsubOps() }
	}
	s.mu.Unlock()
	s.changed()
}

func (s *OAuthService) close() {
	if s == nil {
		return
	}
	s.attach(nil, nil)
	s.announce.close()
}

func (s *OAuthService) manager() (*oauth.Custody, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		return nil, errNoOAuth
	}
	return s.m, nil
}

// catalogue is the operation catalogue, attached with the manager.
func (s *OAuthService) catalogue() (*operation.Catalogue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ops == nil {
		return nil, errNoOAuth
	}
	return s.ops, nil
}

// Presets lists the providers Yett knows by name. It needs no vault.
func (s *OAuthService) Presets() ([]PresetView, error) {
	list := providers.Presets()
	out := make([]PresetView, 0, len(list))
	for _, p := range list {
		out = append(out, presetView(p))
	}
	return out, nil
}

// Discover reads an issuer's metadata (OpenID Connect discovery, then RFC
// 8414) so the form can fill in a custom provider's endpoints.
func (s *OAuthService) Discover(issuer string) (DiscoveryView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), discoverTimeout)
	defer cancel()
	md, err := providers.Discover(ctx, discoveryClient, strings.TrimSpace(issuer))
	if err != nil {
		return DiscoveryView{}, s.discoveryError(err)
	}
	return discoveryView(md), nil
}

// discoveryClient talks only to the issuer the person typed, as the
// manager's own client does.
var discoveryClient = oauth.ProviderClient(discoverTimeout)

// NewClientKey makes a P-256 key for private_key_jwt and returns its public
// half to register with the provider; the private half is sealed.
func (s *OAuthService) NewClientKey() (ClientKeyView, error) {
	m, err := s.manager()
	if err != nil {
		return ClientKeyView{}, err
	}
	k, err := m.NewClientKey()
	if err != nil {
		return ClientKeyView{}, s.publicError("new client key", err)
	}
	return ClientKeyView{KeyID: k.ID, PublicJWK: k.PublicJWK, JWKS: k.JWKS}, nil
}

// Connect starts the connection the person filled in. It returns once the
// flow started (client credentials: once it finished); EventOAuthFlow
// reports the end of a flow that waits for the browser or a device code.
func (s *OAuthService) Connect(form ConnectForm) (FlowView, error) {
	req, err := form.request()
	form.ClientSecret = "" // the only copy left is req's, wiped below
	defer clear(req.ClientSecret)
	if err != nil {
		return FlowView{}, err
	}
	m, err := s.manager()
	if err != nil {
		return FlowView{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	f, err := m.Connect(ctx, req)
	if err != nil {
		return FlowView{}, s.publicError("connect", err)
	}
	return s.follow(m, f), nil
}

// Reconnect starts authorization id's flow again, for new tokens.
func (s *OAuthService) Reconnect(id string) (FlowView, error) {
	m, err := s.manager()
	if err != nil {
		return FlowView{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	f, err := m.Reconnect(ctx, id)
	if err != nil {
		return FlowView{}, s.publicError("reconnect", err)
	}
	return s.follow(m, f), nil
}

// follow reports the flow's end with EventOAuthFlow. A flow that already
// ended (client credentials) is reported at once; the manager does not keep
// those, so there is nothing to wait on.
func (s *OAuthService) follow(m *oauth.Custody, f oauth.FlowView) FlowView {
	v := flowView(f)
	if f.State != oauth.FlowWaiting {
		s.events.send(EventOAuthFlow, v)
		return v
	}
	s.mu.Lock()
	ctx := s.waiters
	s.mu.Unlock()
	go func() {
		end, err := m.WaitFlow(ctx, f.ID)
		if err != nil {
			return // detached (the manager closed with the vault reset or Yett)
		}
		s.events.send(EventOAuthFlow, flowView(end))
	}()
	return v
}

// Flow returns a waiting or recently ended flow's state.
func (s *OAuthService) Flow(flowID string) (FlowView, error) {
	m, err := s.manager()
	if err != nil {
		return FlowView{}, err
	}
	f, ok := m.Flow(flowID)
	if !ok {
		return FlowView{}, shown("There is no such connection flow in progress.")
	}
	return flowView(f), nil
}

// CancelFlow ends a waiting flow; nothing is stored.
func (s *OAuthService) CancelFlow(flowID string) error {
	m, err := s.manager()
	if err != nil {
		return err
	}
	if _, ok := m.Flow(flowID); !ok {
		return shown("There is no such connection flow in progress.")
	}
	m.CancelFlow(flowID)
	return nil
}

// Authorizations lists the inventory, newest first, each row with the
// operations the catalogue binds to it.
func (s *OAuthService) Authorizations() ([]AuthorizationView, error) {
	m, err := s.manager()
	if err != nil {
		return nil, err
	}
	ops, err := s.catalogue()
	if err != nil {
		return nil, err
	}
	list, err := m.Authorizations()
	if err != nil {
		return nil, s.publicError("list authorizations", err)
	}
	names := ops.NamesByAuthorization()
	out := make([]AuthorizationView, 0, len(list))
	for _, a := range list {
		out = append(out, authorizationView(a, names[a.ID]))
	}
	s.overlayInventory(out)
	return out, nil
}

// UpdateInventory sets an authorization's owner, backup revoker and review
// date in the owner inventory, which alone holds them (each change audited
// there), and the disable procedure the person wrote for its card.
func (s *OAuthService) UpdateInventory(id string, inv InventoryForm) error {
	reviewBy, err := parseDay("review date", inv.ReviewBy)
	if err != nil {
		return err
	}
	m, err := s.manager()
	if err != nil {
		return err
	}
	if err := s.updateOwners(id, inv, reviewBy); err != nil {
		return err
	}
	return s.publicError("update inventory", m.SetDisableProcedure(id, inv.DisableProcedure))
}

// Revoke disables the authorization locally at once, then revokes it at
// the provider and verifies, and reports each step.
func (s *OAuthService) Revoke(id string) (RevokeReport, error) {
	m, err := s.manager()
	if err != nil {
		return RevokeReport{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), revokeTimeout)
	defer cancel()
	rep, err := m.Revoke(ctx, id)
	if err != nil {
		return RevokeReport{}, s.publicError("revoke", err)
	}
	return revokeReport(rep), nil
}

// SetEndpoints adds or corrects where an authorization is revoked (RFC
// 7009) and verified (RFC 7662) at its provider; "" removes one. Tokens
// waiting to be revoked go to the new endpoint at once.
func (s *OAuthService) SetEndpoints(id, revocation, introspection string) error {
	m, err := s.manager()
	if err != nil {
		return err
	}
	return s.publicError("set endpoints", m.SetEndpoints(context.Background(), id, strings.TrimSpace(revocation), strings.TrimSpace(introspection)))
}

// Resume switches a suspended authorization back on (an unattended drill
// suspends it for a moment; one that could not finish leaves it so).
func (s *OAuthService) Resume(id string) error {
	m, err := s.manager()
	if err != nil {
		return err
	}
	return s.publicError("switch back on", m.Resume(context.Background(), id))
}

// Operations lists the named operations agents may call.
func (s *OAuthService) Operations() ([]OperationView, error) {
	ops, err := s.catalogue()
	if err != nil {
		return nil, err
	}
	list := ops.List()
	out := make([]OperationView, 0, len(list))
	for _, o := range list {
		out = append(out, operationView(o))
	}
	return out, nil
}

// SaveOperation creates a named operation; a name in use is refused (the
// editor adds, it never rebinds another operation silently).
func (s *OAuthService) SaveOperation(op OperationView) error {
	o, err := op.operation()
	if err != nil {
		return err
	}
	ops, err := s.catalogue()
	if err != nil {
		return err
	}
	return s.publicError("save operation", ops.Add(o))
}

// RemoveOperation deletes a named operation.
func (s *OAuthService) RemoveOperation(name string) error {
	ops, err := s.catalogue()
	if err != nil {
		return err
	}
	err = ops.Remove(name)
	if errors.Is(err, operation.ErrNotFound) {
		return shown("There is no operation by that name.")
	}
	return s.publicError("remove operation", err)
}

// Settings returns the block-uncontrolled switch, which is the owner
// inventory's: it applies to every row, OAuth or not.
func (s *OAuthService) Settings() (SettingsView, error) {
	st, err := s.inventory.Settings()
	if err != nil {
		return SettingsView{}, err
	}
	return SettingsView{BlockUncontrolled: st.BlockUncontrolled}, nil
}

// SetBlockUncontrolled makes every call that would use a row not under
// control refused (on) or only marked (off), as the Inventory view does.
func (s *OAuthService) SetBlockUncontrolled(on bool) error {
	return s.inventory.SetBlockUncontrolled(on)
}

// oauthTexts are the manager's documented errors: their texts are written
// for a person and never carry a token, a secret or a provider's response
// body.
var oauthTexts = []known{
	{vault.ErrLocked, string(errNoOAuth)}, {vault.ErrNotInitialised, string(errNoOAuth)},
	{oauth.ErrNotFound, "There is no such authorization."},
	{err: oauth.ErrInvalid}, {err: oauth.ErrNeedsReconnection}, {err: oauth.ErrDisabled},
	{err: oauth.ErrTransient}, {err: oauth.ErrProvider}, {err: oauth.ErrFlow}, {err: oauth.ErrConfig},
	{err: operation.ErrInvalid},
}

func (s *OAuthService) publicError(what string, err error) error {
	return publicError(s.log, "oauth: "+what, err, oauthTexts)
}

// discoveryTexts: what a person reads when the issuer they typed did not
// give usable metadata.
var discoveryTexts = []known{
	{err: providers.ErrInvalidMetadata}, {err: providers.ErrIssuerMismatch}, {err: providers.ErrInsecureEndpoint},
	{err: providers.ErrMetadataTooLarge}, {err: providers.ErrRedirectRefused}, {err: providers.ErrNoMetadata},
	{context.DeadlineExceeded, "The issuer did not answer in time."},
}

func (s *OAuthService) discoveryError(err error) error {
	if e := publicError(s.log, "oauth discovery", err, discoveryTexts); e != errCouldNot {
		return e
	}
	return shown("The issuer could not be reached.")
}

// openBrowser opens an authorization URL in the system browser; before the
// window exists (tests) the UI shows the URL instead.
func (a *App) openBrowser(url string) {
	a.mu.Lock()
	ctx := a.ctx
	a.mu.Unlock()
	if ctx != nil {
		runtime.BrowserOpenURL(ctx, url)
	}
}
