// Package oauth is Yett's OAuth custody: a person connects an account from
// the app (authorization code with PKCE on a loopback redirect, client
// credentials, or the device flow); the refresh token, any client secret and
// every private key stay sealed under the vault; agents name operations and
// never see a token; a refresh happens only to complete an approved action,
// once per authorization at a time across goroutines and processes; and
// revocation disables locally first, then revokes at the provider (RFC 7009)
// and verifies.
//
// There is deliberately no exported function that returns a token. The
// gateway gets an action.Credential whose secret is lent for one request.
package oauth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/yettdev/yett/backend/feed"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/store"
	"github.com/yettdev/yett/backend/userdir"
	"github.com/yettdev/yett/backend/vault"
)

// Errors callers branch on. Their texts never carry a token or a provider's
// response body.
var (
	ErrConfig            = errors.New("oauth: incomplete configuration")
	ErrInvalid           = errors.New("oauth: invalid input")
	ErrNotFound          = errors.New("oauth: no such authorization")
	ErrNeedsReconnection = errors.New("oauth: the authorization needs its owner to reconnect")
	ErrDisabled          = errors.New("oauth: the authorization is disabled")
	ErrSuspended         = errors.New("oauth: the authorization is suspended")
	ErrTransient         = errors.New("oauth: the provider could not be reached; the stored authorization is unchanged")
	ErrProvider          = errors.New("oauth: the provider refused the request")
	ErrFlow              = errors.New("oauth: the connection flow failed")
)

// Config configures a Custody. DataDir, Vault and Audit are required.
type Config struct {
	DataDir string
	Vault   *vault.Vault
	Audit   *audit.Log
	// BootID names the gateway start in audit events; nil means none.
	BootID func() string
	// HTTPClient talks to providers' token, device, revocation and
	// introspection endpoints; nil means a client with a 30 s timeout and
	// no proxy.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Now        func() time.Time
	// RefreshMargin: an access token expiring within it is refreshed before
	// use; 0 means 60 s.
	RefreshMargin time.Duration
	// FlowTimeout bounds a connection flow; 0 means 10 min.
	FlowTimeout time.Duration
	// RevokeRetry is the first delay before a provider revocation that
	// failed is tried again (it doubles up to 1 h); 0 means 30 s.
	RevokeRetry time.Duration
	// OpenBrowser opens the authorization URL in the system browser; nil
	// leaves it to the UI.
	OpenBrowser func(url string)
	// Surface names the front end in the audit entries (their surface
	// field): "terminal" for the yett CLI's setup commands; "" for none.
	Surface string
}

// Custody is the OAuth custodian of one data directory. Safe for
// concurrent use.
type Custody struct {
	cfg     Config
	db      *gorm.DB
	serving *sql.Stmt // servingQuery
	log     *slog.Logger
	vault   *vault.Vault
	http    *http.Client
	locks   string // directory of per-authorization lock files

	// The three roles of custody, each with its own state (under mu):
	// lending and refreshing access tokens, connecting accounts, and
	// revoking them. Custody itself holds the rows, the records and the
	// person's verbs.
	tokens    *tokens
	connector *connector
	revoker   *revoker

	mu     sync.Mutex
	closed bool
	unsub  func()
	stop   context.CancelFunc
	ctx    context.Context
	wg     sync.WaitGroup

	events feed.Feed[Event]

	// owners names who answers for an authorization in audit entries
	// (the owner inventory, wired by the keeper); nil names only what
	// was declared at connection.
	owners atomic.Pointer[ownersBox]

	// hookAfterTokenResponse runs after a provider answered a refresh
	// successfully and before the answer is stored (tests only).
	hookAfterTokenResponse func()
}

// Open opens (or creates) the OAuth database in cfg.DataDir and starts the
// durable revocation retry loop.
func Open(cfg Config) (*Custody, error) {
	if cfg.DataDir == "" || cfg.Vault == nil || cfg.Audit == nil {
		return nil, ErrConfig
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RefreshMargin <= 0 {
		cfg.RefreshMargin = 60 * time.Second
	}
	if cfg.FlowTimeout <= 0 {
		cfg.FlowTimeout = 10 * time.Minute
	}
	if cfg.RevokeRetry <= 0 {
		cfg.RevokeRetry = 30 * time.Second
	}
	if cfg.BootID == nil {
		cfg.BootID = func() string { return "" }
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = ProviderClient(30 * time.Second)
	}
	if err := userdir.Ensure(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	locks := filepath.Join(cfg.DataDir, "oauth-locks")
	if err := userdir.Ensure(locks); err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	db, err := store.Open(filepath.Join(cfg.DataDir, FileName), history)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	m := &Custody{cfg: cfg, db: db, log: cfg.Logger, vault: cfg.Vault, http: cfg.HTTPClient, locks: locks}
	m.tokens = &tokens{Custody: m, cache: map[string]*accessToken{}, flights: map[string]*flight{}, nonces: map[string]string{}}
	m.connector = &connector{Custody: m, flows: map[string]*flow{}}
	m.revoker = &revoker{Custody: m, retryC: make(chan struct{}, 1)}
	m.ctx, m.stop = context.WithCancel(context.Background())
	if err := m.followVault(); err != nil {
		store.Close(db)
		return nil, err
	}
	if m.serving, err = prepare(db, servingQuery); err != nil {
		store.Close(db)
		return nil, err
	}
	m.unsub = cfg.Vault.Subscribe(func(ev vault.Event) {
		if ev.Kind == vault.EventLocked {
			m.tokens.dropCache("")
			m.connector.cancelFlows("the vault was locked")
		} else {
			m.revoker.kickRetry()
		}
	})
	m.wg.Add(1)
	go m.revoker.retryLoop()
	return m, nil
}

// Close stops flows and the retry loop and closes the database.
func (m *Custody) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.unsub()
	m.connector.cancelFlows("Yett is closing")
	m.stop()
	m.wg.Wait()
	m.tokens.dropCache("")
	m.serving.Close()
	return store.Close(m.db)
}

// prepare makes a statement on db's connection pool.
func prepare(db *gorm.DB, query string) (*sql.Stmt, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	stmt, err := sqlDB.Prepare(query)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return stmt, nil
}

func (m *Custody) now() time.Time { return m.cfg.Now() }

// Event tells subscribers what changed.
type Event struct {
	// Disabled names an authorization that was just disabled locally
	// (revoked); "" for any other change of the inventory or flows.
	Disabled string
}

// Subscribe calls fn after every change, as backend/feed delivers: in
// order, one at a time, on the goroutine that made the change, after the
// manager's locks are released (fn may call back into the manager). It
// returns a function that cancels the subscription.
func (m *Custody) Subscribe(fn func(Event)) (cancel func()) { return m.events.Subscribe(fn) }

func (m *Custody) notify(ev Event) { m.events.Publish(ev) }

func (m *Custody) changed() { m.notify(Event{}) }

// dropCache forgets cached access tokens of one authorization ("" = all).
func (m *tokens) dropCache(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == "" {
		for k, t := range m.cache {
			t.wipe()
			delete(m.cache, k)
		}
		return
	}
	if t := m.cache[id]; t != nil {
		t.wipe()
		delete(m.cache, id)
	}
}

// Owners is who answers for an authorization: the owner inventory, which
// holds and edits the owner (custody keeps custody only). OwnerOf says
// false for an authorization it has no record of yet.
type Owners interface {
	OwnerOf(id string) (owner string, ok bool)
}

type ownersBox struct{ o Owners }

// SetOwners makes o the one custody's audit entries take the owner from;
// nil takes it away.
func (m *Custody) SetOwners(o Owners) {
	if o == nil {
		m.owners.Store(nil)
		return
	}
	m.owners.Store(&ownersBox{o})
}

// ownerOf is the owner an entry about r names: the inventory's, or the
// owner declared at connection while the inventory has not taken the
// authorization over yet (its own connection entry).
func (m *Custody) ownerOf(r *row) string {
	if b := m.owners.Load(); b != nil {
		if owner, ok := b.o.OwnerOf(r.ID); ok {
			return owner
		}
	}
	return r.Owner
}

// record appends an OAuth event; OAuth events are facts about what already
// happened, so a failure is logged, not returned.
func (m *Custody) record(ctx context.Context, typ audit.EventType, r *row, step, errorCode string, ok bool, op string) {
	ev := audit.Event{
		Type: typ, Time: m.now().UTC(), BootID: m.cfg.BootID(), VaultEpoch: m.vault.Epoch(),
		AuthorizationID: r.ID, Success: &ok, Surface: m.cfg.Surface,
		OAuth: &audit.OAuthFacts{
			Provider: hostOf(r.TokenEndpoint), AccountRef: clip(r.AccountRef, 256), Scopes: clip(r.Scopes, 1024),
			Environment: r.Environment, Owner: clip(m.ownerOf(r), 256), Step: step, Flow: r.CreatedHow,
			ErrorCode: clip(errorCode, 64), Operation: op,
		},
	}
	if _, err := m.cfg.Audit.Append(context.WithoutCancel(ctx), ev); err != nil {
		m.log.Error("audit log refused an OAuth event", "type", string(typ), "authorization", r.ID)
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// followVault binds the database to the vault it was sealed under. After a
// vault reset every sealed token and key is unreadable for good: the rows
// stay (they say which accounts were connected, and that the provider may
// still hold their grants) but go to needs_reconnection, and the sealed
// material is dropped.
func (m *Custody) followVault() error {
	current := m.vault.VaultID()
	if current == "" {
		return nil
	}
	var stored string
	if err := m.db.Raw(`SELECT vault_id FROM oauth_settings WHERE id = 1`).Scan(&stored).Error; err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	if stored == current {
		return nil
	}
	return m.db.Transaction(func(tx *gorm.DB) error {
		if stored != "" {
			m.log.Warn("the vault was reset: every connected account needs its owner to reconnect it")
			if err := tx.Model(&row{}).Where("state IN ?", []string{StateActive, StateSuspended}).Updates(map[string]any{
				"state": StateNeedsReconnection, "state_reason": "vault_reset",
			}).Error; err != nil {
				return err
			}
			if err := tx.Exec(`UPDATE oauth_authorizations SET sealed_refresh = NULL, sealed_access = NULL, sealed_client_secret = NULL, refresh_in_flight = 0`).Error; err != nil {
				return err
			}
			for _, t := range []string{"oauth_keys", "oauth_revocations"} {
				if err := tx.Exec(`DELETE FROM ` + t).Error; err != nil {
					return err
				}
			}
		}
		return tx.Exec(`UPDATE oauth_settings SET vault_id = ? WHERE id = 1`, current).Error
	})
}

// ProviderClient is an HTTP client for a provider's endpoints (token,
// revocation, introspection, discovery): it goes to the provider directly,
// ignoring proxy settings from the environment, and gives up after timeout.
func ProviderClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, ForceAttemptHTTP2: true, TLSHandshakeTimeout: 10 * time.Second}}
}
