package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/ids"
)

// Revocation steps, in the order they run.
const (
	StepLocalDisable       = "local_disable"
	StepProviderRevocation = "provider_revocation"
	StepVerification       = "verification"
)

// RevokeStep is one step's outcome.
type RevokeStep struct {
	Step   string    `json:"step"`
	OK     bool      `json:"ok"`
	Detail string    `json:"detail"`
	At     time.Time `json:"at"`
	// TokenType names the token a provider step was about
	// (refresh_token, access_token); Status is the provider's HTTP status
	// for it, 0 when it was not reached. Evidence for a revocation drill.
	TokenType string `json:"token_type,omitempty"`
	Status    int    `json:"status,omitempty"`
	// Unverified: a verification step the provider gave no way to check
	// (no introspection endpoint): the revocation was accepted, and
	// nothing says the token is dead.
	Unverified bool `json:"unverified,omitempty"`
}

// RevokeReport says what Revoke did.
type RevokeReport struct {
	AuthorizationID string       `json:"authorization_id"`
	Steps           []RevokeStep `json:"steps"`
	// RetryPending: the provider could not be reached; Yett keeps trying
	// (durably, across restarts) while the vault is unlocked.
	RetryPending bool `json:"retry_pending"`
}

type queued struct {
	ID              string
	AuthorizationID string
	TokenTypeHint   string
	SealedToken     []byte
	Attempts        int
}

// Revoke cuts authorization id off. First, locally and without any network
// call: the refresh token and cached access tokens leave service, the
// sessions that could use it end (subscribers get Event.Disabled), and its operations are
// refused from then on. Then the tokens are revoked at the provider (RFC
// 7009), retried durably if it cannot be reached, and the revocation is
// verified by introspection (RFC 7662) where the provider offers it. Each
// step is audited.
func (m *Custody) Revoke(ctx context.Context, id string) (RevokeReport, error) {
	rep := RevokeReport{AuthorizationID: id}
	if err := m.Disable(ctx, id); err != nil {
		return rep, err
	}
	rep.Steps = append(rep.Steps, RevokeStep{Step: StepLocalDisable, OK: true, At: m.now().UTC(),
		Detail: "Yett no longer holds a usable token for it; its operations are refused and the sessions that could use it ended"})
	at, err := m.RevokeAtProvider(ctx, id)
	if err != nil {
		return rep, err
	}
	rep.Steps = append(rep.Steps, at.Steps...)
	rep.RetryPending = at.RetryPending
	return rep, nil
}

// Disable is Revoke's first step alone: authorization id leaves service
// locally, at once and without any network call, and its tokens wait in
// the revocation queue for RevokeAtProvider (or the retry loop).
func (m *Custody) Disable(ctx context.Context, id string) error {
	_, err := m.revoker.disable(ctx, id)
	return err
}

// RevokeAtProvider is Revoke's provider steps for an authorization already
// disabled: every token of its queue is revoked at the provider (RFC 7009)
// and verified, and the report says how each went.
func (m *Custody) RevokeAtProvider(ctx context.Context, id string) (RevokeReport, error) {
	rep := RevokeReport{AuthorizationID: id}
	r, err := loadRow(m.db, id)
	if err != nil {
		return rep, notFound(err)
	}
	if r.State == StateActive || r.State == StateSuspended || r.State == StateNeedsReconnection {
		return rep, fmt.Errorf("%w: disable it first", ErrInvalid)
	}
	rep.Steps, rep.RetryPending = m.revoker.revokeQueued(ctx, r, true)
	m.changed()
	return rep, nil
}

// disable is the local step. It takes no lock that a refresh holds across
// a network call, so it never waits for the network.
func (m *revoker) disable(ctx context.Context, id string) (*row, error) {
	var r *row
	err := m.db.Transaction(func(tx *gorm.DB) error {
		var err error
		if r, err = loadRow(tx, id); err != nil {
			return notFound(err)
		}
		if r.State == StateRevoked {
			return nil
		}
		if err := m.enqueue(tx, r, r.SealedRefresh, "refresh", r.Generation, "refresh_token"); err != nil {
			return err
		}
		if err := m.enqueue(tx, r, r.SealedAccess, "access", r.Generation, "access_token"); err != nil {
			return err
		}
		rev := RevocationPending
		if r.RevocationEndpoint == "" {
			rev = RevocationFailed
		}
		return tx.Model(&row{}).Where("id = ?", id).Updates(map[string]any{
			"state": StateDisabled, "state_reason": "revoked by a person", "revocation": rev,
			"sealed_refresh": nil, "sealed_access": nil, "generation": r.Generation + 1, "refresh_in_flight": 0,
		}).Error
	})
	if err != nil {
		return nil, err
	}
	m.tokens.dropCache(id)
	m.notify(Event{Disabled: id})
	m.record(ctx, audit.EventAuthorizationDisabled, r, StepLocalDisable, "", true, "")
	m.changed()
	return r, nil
}

// enqueue reseals a live token for the revocation queue. A token that
// cannot be opened (vault locked meanwhile, or damaged) is dropped: it is
// out of service either way, only the provider step is lost.
func (m *revoker) enqueue(tx *gorm.DB, r *row, sealed []byte, field string, gen int64, hint string) error {
	if len(sealed) == 0 {
		return nil
	}
	v, err := m.vault.OpenBlob(purposeToken, tokenAD(r.ID, field, gen), sealed)
	if err != nil {
		m.log.Warn("a token could not be queued for provider revocation", "authorization", r.ID, "field", field)
		return nil
	}
	defer clear(v)
	if field == "access" {
		var sa sealedAccess
		if json.Unmarshal(v, &sa) != nil {
			return nil
		}
		v = []byte(sa.Value)
	}
	// Due only after the first retry delay: the person's own Revoke sends
	// it now, and the retry loop must not race that call for it.
	if err := m.queueToken(tx, r.ID, hint, v, m.now().Add(m.cfg.RevokeRetry)); err != nil && !errors.Is(err, errNotSealed) {
		return err
	}
	return nil
}

// errNotSealed: the vault could not seal a token for the queue (it locked
// meanwhile).
var errNotSealed = errors.New("oauth: the token could not be sealed for revocation")

// queueToken seals a token for purposeRevocation only and adds it to the
// revocation queue of authorization id, in tx; the retry loop takes it
// from due on.
func (m *revoker) queueToken(tx *gorm.DB, id, hint string, value []byte, due time.Time) error {
	qid := ids.Sized("rv-", 9)
	st, err := m.vault.SealBlob(purposeRevocation, tokenAD(qid, hint, 0), value)
	if err != nil {
		return errNotSealed
	}
	return tx.Exec(`INSERT INTO oauth_revocations (id, authorization_id, token_type_hint, sealed_token, attempts, next_attempt, last_error, created_at)
		VALUES (?, ?, ?, ?, 0, ?, '', ?)`, qid, id, hint, st, due.Unix(), m.now().Unix()).Error
}

// revokeQueued revokes and verifies r's queued tokens; first is true for
// the person's own click (every queued token is sent, its steps are
// reported), false for the retry loop (only the tokens that are due).
func (m *revoker) revokeQueued(ctx context.Context, r *row, first bool) (steps []RevokeStep, pending bool) {
	m.revMu.Lock()
	defer m.revMu.Unlock()
	var qs []queued
	m.db.Raw(`SELECT id, authorization_id, token_type_hint, sealed_token, attempts FROM oauth_revocations
		WHERE authorization_id = ? AND (? OR next_attempt <= ?) ORDER BY token_type_hint DESC`, r.ID, first, m.now().Unix()).Scan(&qs)
	step := func(name string, ok bool, format string, a ...any) {
		steps = append(steps, RevokeStep{Step: name, OK: ok, Detail: fmt.Sprintf(format, a...), At: m.now().UTC()})
	}
	if len(qs) == 0 {
		if !first {
			// Another call sent them since the loop looked: the outcome
			// it recorded stands.
			return nil, false
		}
		step(StepProviderRevocation, false, "Yett held no token it could send to the provider (none was stored, or the vault is locked)")
		m.finishRevocation(r, RevocationFailed)
		return steps, false
	}
	if r.RevocationEndpoint == "" {
		step(StepProviderRevocation, false, "%s has no RFC 7009 revocation endpoint: revoke the app's access in the provider's settings (%s)", hostOf(r.TokenEndpoint), r.Provider)
		for _, q := range qs {
			m.db.Exec(`DELETE FROM oauth_revocations WHERE id = ?`, q.ID)
		}
		m.record(ctx, audit.EventAuthorizationRevoked, r, StepProviderRevocation, "no_endpoint", false, "")
		m.finishRevocation(r, RevocationFailed)
		return steps, false
	}
	allOK, unverified := true, false
	for _, q := range qs {
		tok, err := m.vault.OpenBlob(purposeRevocation, tokenAD(q.ID, q.TokenTypeHint, 0), q.SealedToken)
		if err != nil {
			step(StepProviderRevocation, false, "the vault is locked; Yett will send the %s revocation after unlock", hintName(q.TokenTypeHint))
			pending = true
			continue
		}
		status, err := m.post(ctx, r, r.RevocationEndpoint, url.Values{"token": {string(tok)}, "token_type_hint": {q.TokenTypeHint}})
		if err != nil {
			status = 0
		}
		mark := func(n int) {
			steps[len(steps)-1].TokenType, steps[len(steps)-1].Status = q.TokenTypeHint, n
		}
		switch {
		case err != nil || status >= 500 || status == http.StatusTooManyRequests:
			clear(tok)
			why := "unreachable"
			if err == nil {
				why = fmt.Sprintf("HTTP %d", status)
			}
			backoff := m.cfg.RevokeRetry << min(q.Attempts, 7)
			backoff = min(backoff, time.Hour)
			m.db.Exec(`UPDATE oauth_revocations SET attempts = attempts + 1, next_attempt = ?, last_error = ? WHERE id = ?`,
				m.now().Add(backoff).Unix(), why, q.ID)
			step(StepProviderRevocation, false, "the provider could not revoke the %s (%s); Yett retries in %s", hintName(q.TokenTypeHint), why, backoff.Round(time.Second))
			mark(status)
			m.record(ctx, audit.EventAuthorizationRevoked, r, StepProviderRevocation, "retry_"+q.TokenTypeHint, false, "")
			pending = true
			continue
		case status != http.StatusOK:
			// RFC 7009 §2.2.1: e.g. unsupported_token_type. Not retried.
			step(StepProviderRevocation, false, "the provider refused to revoke the %s (HTTP %d)", hintName(q.TokenTypeHint), status)
			mark(status)
			m.record(ctx, audit.EventAuthorizationRevoked, r, StepProviderRevocation, fmt.Sprintf("http_%d", status), false, "")
			allOK = false
		default:
			step(StepProviderRevocation, true, "the provider accepted the revocation of the %s (RFC 7009 answers 200 even for tokens it no longer knows)", hintName(q.TokenTypeHint))
			mark(status)
			m.record(ctx, audit.EventAuthorizationRevoked, r, StepProviderRevocation, q.TokenTypeHint, true, "")
		}
		v, detail := m.verify(ctx, r, tok, q.TokenTypeHint)
		clear(tok)
		ok := v != notDead
		step(StepVerification, ok, "%s", detail)
		mark(0)
		code := q.TokenTypeHint
		if v == unverifiable {
			steps[len(steps)-1].Unverified, unverified, code = true, true, "unverified_"+q.TokenTypeHint
		}
		m.record(ctx, audit.EventAuthorizationRevoked, r, StepVerification, code, ok, "")
		if !ok {
			allOK = false
		}
		m.db.Exec(`DELETE FROM oauth_revocations WHERE id = ?`, q.ID)
	}
	// A token the provider refused, or still reports active, makes the
	// revocation a manual step at once. Done waits until no token of r is
	// left in the queue (some may not be due yet).
	var left int64
	m.db.Raw(`SELECT COUNT(*) FROM oauth_revocations WHERE authorization_id = ?`, r.ID).Scan(&left)
	switch {
	case !allOK:
		m.finishRevocation(r, RevocationFailed)
	case unverified:
		m.finishRevocation(r, RevocationUnverified)
	case !pending && left == 0:
		m.finishRevocation(r, RevocationDone)
	}
	return steps, pending
}

func hintName(h string) string { return strings.ReplaceAll(h, "_", " ") }

// finishRevocation marks r revoked, its provider step done, unverified or
// failed. A failure stands: tokens revoked later (a retry, or a refresh
// that raced the revoke) do not turn it into done; and a token that could
// not be verified keeps it unverified.
func (m *revoker) finishRevocation(r *row, how string) {
	m.db.Exec(`UPDATE oauth_authorizations SET state = ?, revocation = CASE
		WHEN revocation = ? THEN revocation
		WHEN revocation = ? AND ? = ? THEN revocation
		ELSE ? END WHERE id = ?`,
		StateRevoked, RevocationFailed, RevocationUnverified, how, RevocationDone, how, r.ID)
	m.changed()
}

// Verdicts of verify.
type verdict int

const (
	// verifiedDead: the provider says the token is inactive.
	verifiedDead verdict = iota
	// notDead: the provider says it is active, or its answer could not be
	// had or read.
	notDead
	// unverifiable: the provider offers no way to ask (no introspection,
	// and no refresh to try for an access token).
	unverifiable
)

// verify checks a revoked token is inactive: by introspection (RFC 7662)
// when the provider has an endpoint; else, for a refresh token, by a
// refresh that must fail (harmless: the token is already revoked).
func (m *revoker) verify(ctx context.Context, r *row, tok []byte, hint string) (verdict, string) {
	if r.IntrospectionEndpoint != "" {
		body, status, err := m.postRead(ctx, r, r.IntrospectionEndpoint, url.Values{"token": {string(tok)}, "token_type_hint": {hint}})
		if err != nil || status != http.StatusOK {
			return notDead, fmt.Sprintf("introspection of the %s failed (%s)", hintName(hint), statusText(status, err))
		}
		var ans struct {
			Active *bool `json:"active"`
		}
		if json.Unmarshal(body, &ans) != nil || ans.Active == nil {
			return notDead, "the introspection answer could not be read"
		}
		if *ans.Active {
			return notDead, fmt.Sprintf("the provider still reports the %s active", hintName(hint))
		}
		return verifiedDead, fmt.Sprintf("introspection reports the %s inactive", hintName(hint))
	}
	if hint == "refresh_token" && r.CreatedHow != FlowClientCredentials {
		conf, err := m.tokens.config(r, "")
		if err != nil {
			return notDead, "the refresh check could not be prepared"
		}
		tctx, err := m.tokens.tokenContext(ctx, r, nil)
		if err != nil {
			return notDead, "the refresh check could not be prepared"
		}
		_, err = conf.TokenSource(tctx, &oauth2.Token{RefreshToken: string(tok), Expiry: time.Unix(1, 0)}).Token()
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			return verifiedDead, "a refresh with the revoked token is refused (invalid_grant)"
		}
		if err == nil {
			return notDead, "the provider still accepted the refresh token"
		}
		return notDead, "the refresh check was inconclusive"
	}
	return unverifiable, fmt.Sprintf("not verified: the provider offers no introspection endpoint Yett knows of, so the %s stays valid at most until it expires; add the endpoint in Connections to verify next time", hintName(hint))
}

func statusText(status int, err error) string {
	if err != nil {
		return "unreachable"
	}
	return fmt.Sprintf("HTTP %d", status)
}

func (m *revoker) post(ctx context.Context, r *row, endpoint string, form url.Values) (int, error) {
	_, status, err := m.postRead(ctx, r, endpoint, form)
	return status, err
}

// postRead sends a form to a provider endpoint with r's client
// authentication. The answer body is bounded; it is only parsed, never
// logged.
func (m *revoker) postRead(ctx context.Context, r *row, endpoint string, form url.Values) ([]byte, int, error) {
	tctx, err := m.tokens.tokenContext(ctx, r, nil)
	if err != nil {
		return nil, 0, err
	}
	client := tctx.Value(oauth2.HTTPClient).(*http.Client)
	conf, err := m.tokens.config(r, "")
	if err != nil {
		return nil, 0, err
	}
	style := oauth2.AuthStyle(r.AuthStyle)
	if style == oauth2.AuthStyleInParams || r.ClientAuth == ClientAuthNone {
		form.Set("client_id", r.ClientID)
		if conf.ClientSecret != "" {
			form.Set("client_secret", conf.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if style == oauth2.AuthStyleInHeader && conf.ClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(r.ClientID), url.QueryEscape(conf.ClientSecret))
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, errors.New("unreachable")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return body, resp.StatusCode, nil
}

// kickRetry wakes the retry loop (after an unlock).
func (m *revoker) kickRetry() {
	select {
	case m.retryC <- struct{}{}:
	default:
	}
}

// retryLoop sends queued revocations whose time has come, while the vault
// is unlocked. The queue is in the database, so a restart resumes it.
func (m *revoker) retryLoop() {
	defer m.wg.Done()
	t := time.NewTicker(max(m.cfg.RevokeRetry/4, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		case <-m.retryC:
		}
		var ids []string
		m.db.Raw(`SELECT DISTINCT authorization_id FROM oauth_revocations WHERE next_attempt <= ?`, m.now().Unix()).Scan(&ids)
		for _, id := range ids {
			r, err := loadRow(m.db, id)
			if err != nil {
				m.db.Exec(`DELETE FROM oauth_revocations WHERE authorization_id = ?`, id)
				continue
			}
			m.revokeQueued(m.ctx, r, false)
		}
	}
}
