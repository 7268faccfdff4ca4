package oauth

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/store"
)

// FileName is the OAuth database inside the data directory. It holds the
// inventory in the clear (it names things, it is not secret) and every token
// and key sealed under the vault (vault.SealBlob).
const FileName = "oauth.db"

var history = []store.Migration{
	{Version: 1, Name: "oauth tables", Up: store.Statements(tables...)},
	// The hosts an authorization's tokens may be sent to (APIHosts); ""
	// for one connected before: its preset's, or its provider's own host.
	{Version: 2, Name: "api hosts", Up: store.Statements(`ALTER TABLE oauth_authorizations ADD COLUMN api_hosts TEXT NOT NULL DEFAULT ''`)},
	// The resource its tokens are for (RFC 8707), sent with every
	// authorization and token request: an upstream MCP server's URL; ""
	// for an account connected before, or for one without.
	{Version: 3, Name: "resource indicator", Up: store.Statements(`ALTER TABLE oauth_authorizations ADD COLUMN resource TEXT NOT NULL DEFAULT ''`)},
}

var tables = []string{
	`CREATE TABLE oauth_authorizations (
		id TEXT PRIMARY KEY,
		name TEXT NOT NULL,
		provider TEXT NOT NULL,
		issuer TEXT NOT NULL,
		authorization_endpoint TEXT NOT NULL,
		token_endpoint TEXT NOT NULL,
		revocation_endpoint TEXT NOT NULL,
		introspection_endpoint TEXT NOT NULL,
		device_endpoint TEXT NOT NULL,
		client_id TEXT NOT NULL,
		client_auth TEXT NOT NULL,
		auth_style INTEGER NOT NULL,
		client_key_id TEXT NOT NULL,
		dpop INTEGER NOT NULL,
		require_iss INTEGER NOT NULL,
		scopes TEXT NOT NULL,
		requested_scopes TEXT NOT NULL,
		auth_params TEXT NOT NULL,
		environment TEXT NOT NULL,
		unattended INTEGER NOT NULL,
		created_how TEXT NOT NULL,
		account_ref TEXT NOT NULL,
		owner TEXT NOT NULL,
		backup_revoker TEXT NOT NULL,
		review_by INTEGER NOT NULL,
		disable_procedure TEXT NOT NULL,
		connected_at INTEGER NOT NULL,
		last_refresh INTEGER NOT NULL,
		last_used INTEGER NOT NULL,
		state TEXT NOT NULL,
		state_reason TEXT NOT NULL,
		revocation TEXT NOT NULL,
		generation INTEGER NOT NULL,
		refresh_in_flight INTEGER NOT NULL,
		access_expiry INTEGER NOT NULL,
		sealed_refresh BLOB,
		sealed_access BLOB,
		sealed_client_secret BLOB,
		UNIQUE (name)
	)`,
	// Keys generated in Yett (private_key_jwt client keys, DPoP keys). The
	// private half is sealed; the public JWK is not secret.
	`CREATE TABLE oauth_keys (
		id TEXT PRIMARY KEY,
		purpose TEXT NOT NULL,
		public_jwk TEXT NOT NULL,
		sealed_private BLOB NOT NULL,
		created_at INTEGER NOT NULL
	)`,
	// Named operations lived here until they became their own catalogue
	// (backend/operation, operations.db), which copies these rows once when
	// it creates its file. Custody never reads or writes the table.
	`CREATE TABLE oauth_operations (
		name TEXT PRIMARY KEY,
		authorization_id TEXT NOT NULL,
		spec TEXT NOT NULL,
		updated_at INTEGER NOT NULL
	)`,
	// Tokens taken out of service by a local disable and waiting for the
	// provider to revoke them (RFC 7009) and for the revocation to be
	// verified. They are sealed for another purpose than live tokens, so
	// nothing on the refresh path can open them.
	`CREATE TABLE oauth_revocations (
		id TEXT PRIMARY KEY,
		authorization_id TEXT NOT NULL,
		token_type_hint TEXT NOT NULL,
		sealed_token BLOB NOT NULL,
		attempts INTEGER NOT NULL,
		next_attempt INTEGER NOT NULL,
		last_error TEXT NOT NULL,
		created_at INTEGER NOT NULL
	)`,
	`CREATE TABLE oauth_settings (
		id INTEGER PRIMARY KEY CHECK (id = 1),
		block_uncontrolled INTEGER NOT NULL,
		vault_id TEXT NOT NULL
	)`,
	`INSERT INTO oauth_settings (id, block_uncontrolled, vault_id) VALUES (1, 0, '')`,
}

// row is one authorization as stored.
type row struct {
	ID                    string
	Name                  string
	Provider              string
	Issuer                string
	AuthorizationEndpoint string
	TokenEndpoint         string
	RevocationEndpoint    string
	IntrospectionEndpoint string
	DeviceEndpoint        string
	ClientID              string
	ClientAuth            string
	AuthStyle             int
	ClientKeyID           string
	DPoP                  bool `gorm:"column:dpop"`
	RequireIss            bool
	Scopes                string
	RequestedScopes       string
	AuthParams            string
	Environment           string
	Unattended            bool
	CreatedHow            string
	AccountRef            string
	Owner                 string
	BackupRevoker         string
	ReviewBy              int64
	DisableProcedure      string
	ConnectedAt           int64
	LastRefresh           int64
	LastUsed              int64
	State                 string
	StateReason           string
	Revocation            string
	Generation            int64
	APIHosts              string // space-separated target.HostPattern; "" for the default (apiHostsOf)
	Resource              string // RFC 8707 resource indicator; "" for none
	RefreshInFlight       int64
	AccessExpiry          int64
	SealedRefresh         []byte
	SealedAccess          []byte
	SealedClientSecret    []byte
}

func (row) TableName() string { return "oauth_authorizations" }

// States of an authorization.
const (
	StateActive            = "active"
	StateNeedsReconnection = "needs_reconnection"
	StateDisabled          = "disabled"
	StateRevoked           = "revoked"
	// StateSuspended: switched off locally with its tokens kept (Suspend),
	// until Resume.
	StateSuspended = "suspended"
)

// Revocation progress at the provider.
const (
	RevocationNone    = "none"
	RevocationPending = "pending" // provider not reached yet; retried
	RevocationDone    = "done"
	RevocationFailed  = "failed" // the provider refused, or has no endpoint: manual step
	// RevocationUnverified: the provider accepted every revocation but
	// offers no way to check one of them (no introspection endpoint).
	RevocationUnverified = "unverified"
)

// States and Revocations are every value an AuthorizationView's State
// and Revocation can hold: the window's closed sets
// (frontend/src/lib/contract.gen.ts) are generated from these lists by
// app's TestWindowEnumsAreGenerated.
var (
	States      = []string{StateActive, StateNeedsReconnection, StateSuspended, StateDisabled, StateRevoked}
	Revocations = []string{RevocationNone, RevocationPending, RevocationDone, RevocationUnverified, RevocationFailed}
	// RevokeSteps are a RevokeStep's Step values; Flows and FlowStates a
	// FlowView's Flow and State.
	RevokeSteps = []string{StepLocalDisable, StepProviderRevocation, StepVerification}
	Flows       = []string{FlowAuthorizationCode, FlowClientCredentials, FlowDeviceCode}
	FlowStates  = []string{FlowWaiting, FlowConnected, FlowFailed, FlowCancelled, FlowExpired}
)

var errNoAuthorization = errors.New("oauth: no such authorization")

func loadRow(db *gorm.DB, id string) (*row, error) {
	var r row
	err := db.Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, sql.ErrNoRows) {
		return nil, errNoAuthorization
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return &r, nil
}

func splitScopes(s string) []string { return strings.Fields(s) }
