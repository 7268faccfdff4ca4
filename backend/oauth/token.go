package oauth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/store"
)

// Blob purposes (vault.SealBlob). A token taken out of service is resealed
// for purposeRevocation, which nothing on the refresh path opens.
const (
	purposeToken      = "oauth token"
	purposeRevocation = "oauth revocation"
	purposeClient     = "oauth client secret"
	purposeKey        = "oauth private key"
)

// tokenAD binds a sealed token to its authorization, field and generation.
func tokenAD(id, field string, gen int64) []byte {
	return fmt.Appendf(nil, "%s\x00%s\x00%d", id, field, gen)
}

// accessToken is a live access token held in memory while the vault is
// unlocked. It never leaves this package except lent to one request, and
// prints, marshals and logs as REDACTED.
type accessToken struct {
	gen    int64
	value  tokenValue
	typ    string // "Bearer" or "DPoP"
	expiry time.Time
}

func (t *accessToken) wipe() {
	if t != nil {
		t.value.wipe()
	}
}

func (accessToken) String() string               { return redacted }
func (accessToken) GoString() string             { return redacted }
func (accessToken) Format(f fmt.State, _ rune)   { f.Write([]byte(redacted)) }
func (accessToken) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (accessToken) LogValue() slog.Value         { return slog.StringValue(redacted) }

const redacted = "REDACTED"

// tokenValue is a token's bytes. Like vault.Secret it has no way to print
// them: every fmt verb, JSON, text and slog give REDACTED, and == does not
// compile. fmt cannot call methods on a struct's unexported fields, so the
// types that hold one (accessToken, Lease) redact themselves too.
type tokenValue struct{ b []byte }

func newTokenValue(s string) tokenValue { return tokenValue{b: []byte(s)} }

// wipe zeroes the bytes; the value is empty afterwards.
func (v *tokenValue) wipe() {
	clear(v.b)
	v.b = nil
}

func (tokenValue) String() string               { return redacted }
func (tokenValue) GoString() string             { return redacted }
func (tokenValue) Format(f fmt.State, _ rune)   { f.Write([]byte(redacted)) }
func (tokenValue) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (tokenValue) MarshalText() ([]byte, error) { return []byte(redacted), nil }
func (tokenValue) LogValue() slog.Value         { return slog.StringValue(redacted) }

func (m *tokens) fresh(t *accessToken) bool {
	return t != nil && (t.expiry.IsZero() || t.expiry.Sub(m.now()) > m.cfg.RefreshMargin)
}

// sealedAccess is the plaintext of sealed_access.
type sealedAccess struct {
	Value  string    `json:"v"`
	Type   string    `json:"t"`
	Expiry time.Time `json:"e"`
}

// usable says why r's operations cannot run, without any network call.
// Whether a person answers for it is the owner inventory's to say
// (backend/inventory), not custody's.
func usable(r *row) error { return usableAs(r.State) }

func usableAs(state string) error {
	switch state {
	case StateActive:
		return nil
	case StateNeedsReconnection:
		return ErrNeedsReconnection
	case StateSuspended:
		return ErrSuspended
	}
	return ErrDisabled
}

// servingQuery reads what a caller holding a fresh token in memory must
// know before using it: whether the authorization may serve, and which
// generation of its tokens is in service.
const servingQuery = `SELECT state, generation FROM oauth_authorizations WHERE id = ?`

// inService returns the generation of id's tokens in service, or why the
// authorization cannot serve. It runs on every call that finds a token in
// memory, so it is one prepared statement, not the ORM's whole row.
func (m *tokens) inService(id string) (int64, error) {
	var (
		state string
		gen   int64
	)
	err := m.serving.QueryRow(id).Scan(&state, &gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("oauth: %w", err)
	}
	return gen, usableAs(state)
}

// access returns a fresh access token for authorization id, refreshing it
// at most once at a time per authorization: across goroutines, one caller
// leads and the others wait for its result and use it; across processes, a
// lock file per id serializes the leaders, and a leader reads the row again
// under it, so it uses what another process stored.
//
// Only a caller that finds a fresh token in memory reads the row itself, to
// learn whether that token is still the one in service (another process may
// have refreshed or disabled the authorization). Without one, the callers
// join a flight at once: its leader reads the row under the lock file, and
// the others wait without touching the database, so 100 callers cost one
// row read and one refresh, not 100 reads queued in front of the refresh.
func (m *tokens) access(ctx context.Context, id, op string) (*accessToken, error) {
	for {
		if f := m.inFlight(id); f != nil {
			if t, again, err := m.await(ctx, id, f); !again {
				return t, err
			}
			continue
		}
		if m.warm(id) {
			gen, err := m.inService(id)
			if err != nil {
				return nil, err
			}
			if t := m.cached(id, gen); t != nil {
				return t, nil
			}
		}
		f, leader := m.join(id)
		if leader {
			f.t, f.err = m.lead(ctx, id, op)
			m.mu.Lock()
			delete(m.flights, id)
			m.mu.Unlock()
			close(f.done)
			return f.t, f.err
		}
		if t, again, err := m.await(ctx, id, f); !again {
			return t, err
		}
	}
}

// await waits for another caller's flight and takes its result. again:
// the token was dropped meanwhile (a revoke, a lock), or the leader's caller
// went away, so the caller looks again.
func (m *tokens) await(ctx context.Context, id string, f *flight) (*accessToken, bool, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	switch {
	case f.err == nil && m.current(id, f.t):
		return f.t, false, nil
	case f.err == nil, errors.Is(f.err, context.Canceled), errors.Is(f.err, context.DeadlineExceeded):
		return nil, true, nil
	default:
		return nil, false, f.err
	}
}

func (m *tokens) inFlight(id string) *flight {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.flights[id]
}

// flight is one refresh (or reload) in progress for an authorization.
type flight struct {
	done chan struct{}
	t    *accessToken
	err  error
}

// join returns id's flight in progress, or a new one the caller leads.
func (m *tokens) join(id string) (*flight, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.flights[id]; ok {
		return f, false
	}
	f := &flight{done: make(chan struct{})}
	m.flights[id] = f
	return f, true
}

// current says whether t is still the token in service for id.
func (m *tokens) current(id string, t *accessToken) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cache[id] == t && m.fresh(t)
}

// lead runs under the authorization's lock file: what is stored now is
// the truth (another process may have refreshed meanwhile).
func (m *tokens) lead(ctx context.Context, id, op string) (*accessToken, error) {
	unlock, err := lockFile(ctx, filepath.Join(m.locks, id+".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := loadRow(m.db, id)
	if err != nil {
		return nil, notFound(err)
	}
	if err := usable(r); err != nil {
		return nil, err
	}
	if t, err := m.openAccess(r); err == nil && m.fresh(t) {
		m.keep(id, t)
		return t, nil
	}
	return m.refresh(ctx, r, op)
}

func notFound(err error) error {
	if errors.Is(err, errNoAuthorization) {
		return ErrNotFound
	}
	return err
}

// warm says whether a fresh token for id is in memory.
func (m *tokens) warm(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fresh(m.cache[id])
}

// cached returns a fresh cached token of generation gen.
func (m *tokens) cached(id string, gen int64) *accessToken {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.cache[id]
	if t == nil || t.gen != gen || !m.fresh(t) {
		return nil
	}
	return t
}

func (m *tokens) keep(id string, t *accessToken) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.cache[id]; old != nil && old != t {
		// Not wiped: a request may still hold it.
		delete(m.cache, id)
	}
	m.cache[id] = t
}

func (m *tokens) openAccess(r *row) (*accessToken, error) {
	if len(r.SealedAccess) == 0 {
		return nil, errors.New("no access token")
	}
	pt, err := m.vault.OpenBlob(purposeToken, tokenAD(r.ID, "access", r.Generation), r.SealedAccess)
	if err != nil {
		return nil, err
	}
	defer clear(pt)
	var sa sealedAccess
	if err := json.Unmarshal(pt, &sa); err != nil || sa.Value == "" {
		return nil, errors.New("sealed access token does not decode")
	}
	return &accessToken{gen: r.Generation, value: newTokenValue(sa.Value), typ: sa.Type, expiry: sa.Expiry}, nil
}

// refresh gets a new access token for r (both locks held): with the refresh
// token, or with the client's own credentials for a client-credentials
// authorization. The order is the one that survives crashes and rotation:
// mark the attempt durably, send, validate, store the new tokens and clear
// the mark in one transaction, then let waiters use the result.
func (m *tokens) refresh(ctx context.Context, r *row, op string) (*accessToken, error) {
	if r.RefreshInFlight != 0 {
		// A refresh started under this lock never finished: its process died
		// after presenting the refresh token, and the provider may have
		// rotated it. Presenting it again could trip reuse detection and
		// revoke the whole family, so the owner reconnects instead.
		return nil, m.needsReconnection(ctx, r, "response_lost", op)
	}
	cc := r.CreatedHow == FlowClientCredentials
	var rt []byte
	if !cc {
		if len(r.SealedRefresh) == 0 {
			return nil, m.needsReconnection(ctx, r, "expired_no_refresh_token", op)
		}
		var err error
		rt, err = m.vault.OpenBlob(purposeToken, tokenAD(r.ID, "refresh", r.Generation), r.SealedRefresh)
		if err != nil {
			return nil, m.needsReconnection(ctx, r, "refresh_token_unreadable", op)
		}
		defer clear(rt)
		res := m.db.Model(&row{}).Where("id = ? AND generation = ? AND refresh_in_flight = 0", r.ID, r.Generation).
			Update("refresh_in_flight", r.Generation)
		if res.Error != nil {
			return nil, fmt.Errorf("oauth: recording the refresh: %w", res.Error)
		}
		if res.RowsAffected != 1 {
			return nil, fmt.Errorf("%w: the authorization changed during the refresh", ErrTransient)
		}
	}
	wrote := new(atomic.Bool)
	tctx, err := m.tokenContext(ctx, r, wrote)
	if err != nil {
		m.clearInFlight(r)
		return nil, err
	}
	conf, err := m.config(r, "")
	if err != nil {
		m.clearInFlight(r)
		return nil, err
	}
	var tok *oauth2.Token
	if cc {
		tok, err = m.connector.clientCredentials(tctx, r, conf)
	} else {
		tok, err = conf.TokenSource(tctx, &oauth2.Token{RefreshToken: string(rt), Expiry: time.Unix(1, 0)}).Token()
	}
	if err == nil {
		err = checkToken(tok, r.DPoP)
	}
	if err != nil {
		return nil, m.refreshFailed(ctx, r, err, wrote.Load(), cc, op)
	}
	if m.hookAfterTokenResponse != nil {
		m.hookAfterTokenResponse()
	}
	t, err := m.storeRefreshed(r, tok, cc)
	if err != nil && m.orphaned(r, tok) {
		// Revoked while the refresh was on the wire: the new tokens go
		// straight to the revocation queue, never into service.
		m.record(ctx, audit.EventTokenRefreshed, r, "refresh", "revoked_meanwhile", false, op)
		return nil, ErrDisabled
	}
	if err != nil {
		// The provider rotated but we could not store: the new refresh
		// token is lost with this process's memory; the old one must not
		// be presented again. The in-flight mark stays, so the next
		// attempt reports needs reconnection.
		m.record(ctx, audit.EventTokenRefreshed, r, "refresh", "store_failed", false, op)
		return nil, fmt.Errorf("oauth: storing the refreshed authorization: %w", err)
	}
	m.keep(r.ID, t)
	m.record(ctx, audit.EventTokenRefreshed, r, "refresh", "", true, op)
	m.changed()
	return t, nil
}

// checkToken validates a token response before anything is stored.
func checkToken(tok *oauth2.Token, dpop bool) error {
	if tok == nil || tok.AccessToken == "" {
		return fmt.Errorf("%w: the token response has no access token", ErrProvider)
	}
	typ := strings.ToLower(tok.Type())
	if dpop && typ != "dpop" {
		return fmt.Errorf("%w: the provider issued a %q token although DPoP was required", ErrProvider, tok.Type())
	}
	if !dpop && typ != "bearer" {
		return fmt.Errorf("%w: unsupported token type %q", ErrProvider, clip(tok.Type(), 32))
	}
	return nil
}

func tokenType(dpop bool) string {
	if dpop {
		return "DPoP"
	}
	return "Bearer"
}

// storeRefreshed writes the new tokens and clears the in-flight mark in
// one transaction that also bumps the generation: the old refresh token's
// ciphertext is replaced, so no later reader can present it.
func (m *tokens) storeRefreshed(r *row, tok *oauth2.Token, cc bool) (*accessToken, error) {
	gen := r.Generation + 1
	t := &accessToken{gen: gen, value: newTokenValue(tok.AccessToken), typ: tokenType(r.DPoP), expiry: tok.Expiry}
	sa, err := m.sealAccess(r.ID, gen, t)
	if err != nil {
		return nil, err
	}
	updates := map[string]any{
		"generation": gen, "refresh_in_flight": 0, "sealed_access": sa, "access_expiry": store.UnixSeconds(tok.Expiry),
		"last_refresh": m.now().Unix(),
	}
	if !cc {
		// A provider may return a new refresh token, the same one, or none
		// (keep the current one): x/oauth2 fills in the old value when the
		// response has none. Either way it is resealed for the new
		// generation.
		sr, err := m.vault.SealBlob(purposeToken, tokenAD(r.ID, "refresh", gen), []byte(tok.RefreshToken))
		if err != nil {
			return nil, err
		}
		updates["sealed_refresh"] = sr
	}
	// One UPDATE, so one atomic write: the tokens, the generation and the
	// cleared mark land together or not at all.
	res := m.db.Model(&row{}).Where("id = ? AND generation = ?", r.ID, r.Generation).Updates(updates)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected != 1 {
		return nil, errors.New("the authorization changed while it was refreshed")
	}
	return t, nil
}

func (m *tokens) sealAccess(id string, gen int64, t *accessToken) ([]byte, error) {
	pt, _ := json.Marshal(sealedAccess{Value: string(t.value.b), Type: t.typ, Expiry: t.expiry})
	defer clear(pt)
	return m.vault.SealBlob(purposeToken, tokenAD(id, "access", gen), pt)
}

func (m *tokens) clearInFlight(r *row) {
	m.db.Model(&row{}).Where("id = ? AND generation = ?", r.ID, r.Generation).Update("refresh_in_flight", 0)
}

// refreshFailed classifies a failed refresh. invalid_grant: the owner must
// reconnect (one attempt only). A provider error answer (4xx, 5xx) means the
// request was processed and refused, so the token was not rotated: kept. A
// network failure before the request was fully written: nothing reached the
// provider, kept. A request written but never answered is the lost
// response: the provider may have rotated, so the old token is never
// presented again.
func (m *tokens) refreshFailed(ctx context.Context, r *row, err error, wrote, cc bool, op string) error {
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		code := re.ErrorCode
		if code == "" {
			code = fmt.Sprintf("http_%d", re.Response.StatusCode)
		}
		if re.ErrorCode == "invalid_grant" && !cc {
			return m.needsReconnection(ctx, r, "invalid_grant", op)
		}
		m.clearInFlight(r)
		m.record(ctx, audit.EventTokenRefreshed, r, "refresh", code, false, op)
		if re.Response != nil && re.Response.StatusCode >= 500 {
			return fmt.Errorf("%w (HTTP %d)", ErrTransient, re.Response.StatusCode)
		}
		return fmt.Errorf("%w: %s", ErrProvider, safeCode(code))
	case errors.Is(err, ErrProvider):
		// An answer we refuse to store (wrong token type, no access token):
		// the provider may have rotated; treat as lost.
		if cc {
			m.clearInFlight(r)
			m.record(ctx, audit.EventTokenRefreshed, r, "refresh", "invalid_response", false, op)
			return err
		}
		return m.needsReconnection(ctx, r, "invalid_response", op)
	case !wrote || cc:
		m.clearInFlight(r)
		m.record(ctx, audit.EventTokenRefreshed, r, "refresh", "network", false, op)
		return ErrTransient
	default:
		return m.needsReconnection(ctx, r, "response_lost", op)
	}
}

// safeCode keeps an RFC 6749 error code to its grammar (no free text).
func safeCode(s string) string {
	s = clip(s, 64)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return "error"
		}
	}
	return s
}

// needsReconnection puts r in needs_reconnection: its refresh token and
// cached access tokens are dropped, and its operations refused until the
// owner reconnects.
func (m *tokens) needsReconnection(ctx context.Context, r *row, reason, op string) error {
	m.db.Model(&row{}).Where("id = ?", r.ID).Updates(map[string]any{
		"state": StateNeedsReconnection, "state_reason": reason, "refresh_in_flight": 0,
		"sealed_refresh": nil, "sealed_access": nil, "generation": r.Generation + 1,
	})
	m.dropCache(r.ID)
	m.record(ctx, audit.EventTokenRefreshed, r, "refresh", reason, false, op)
	m.log.Warn("an authorization needs its owner to reconnect", "authorization", r.ID, "reason", reason)
	m.changed()
	return fmt.Errorf("%w (%s)", ErrNeedsReconnection, reason)
}

// orphaned handles tokens a refresh obtained for an authorization that was
// disabled (revoked) while the refresh was on the wire: they are queued for
// provider revocation and the retry loop is woken. It reports whether that
// was the case.
func (m *tokens) orphaned(r *row, tok *oauth2.Token) bool {
	cur, err := loadRow(m.db, r.ID)
	if err != nil || cur.State == StateActive || cur.State == StateNeedsReconnection || cur.State == StateSuspended {
		return false
	}
	m.db.Transaction(func(tx *gorm.DB) error {
		for _, t := range []struct{ v, hint string }{{tok.RefreshToken, "refresh_token"}, {tok.AccessToken, "access_token"}} {
			if t.v == "" {
				continue
			}
			if err := m.revoker.queueToken(tx, r.ID, t.hint, []byte(t.v), m.now()); err != nil {
				return err
			}
		}
		return tx.Exec(`UPDATE oauth_authorizations SET revocation = CASE WHEN revocation = ? THEN revocation ELSE ? END, refresh_in_flight = 0 WHERE id = ?`,
			RevocationFailed, RevocationPending, r.ID).Error
	})
	m.revoker.kickRetry()
	return true
}
