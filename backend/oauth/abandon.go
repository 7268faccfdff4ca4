package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"

	"github.com/yettdev/yett/backend/audit"
)

// StepConnectFailed names, in audit entries, the revocation of tokens a
// connection obtained and could not keep.
const StepConnectFailed = "connect_failed"

// abandon handles a connection that failed after the provider issued its
// tokens (finish refused them: a name taken meanwhile by another process,
// the vault locked, the disk). The provider holds a live grant that no row
// shows, so Yett revokes what it obtained at once (RFC 7009) and checks the
// refresh token is dead. When the provider does not confirm every
// revocation, the tokens are not dropped: they are kept, sealed for
// revocation only, under a row of their own (disabled, revocation pending
// or failed) that the revocation queue works on and Connections and the
// Inventory show, so every grant Yett caused has a row. Each token's
// outcome is audited (authorization_revoked, step connect_failed). The
// error returned is the flow's: what failed and what became of the
// tokens.
func (m *connector) abandon(ctx context.Context, r *row, tok *oauth2.Token, cause error) error {
	ctx = context.WithoutCancel(ctx)
	r.AccountRef = accountRef(tok, r)
	var toks []issued
	if tok.RefreshToken != "" {
		toks = append(toks, issued{"refresh_token", tok.RefreshToken})
	}
	if tok.AccessToken != "" {
		toks = append(toks, issued{"access_token", tok.AccessToken})
	}
	why := strings.TrimPrefix(strings.TrimPrefix(cause.Error(), "oauth: "), "invalid input: ")
	var left []issued
	for _, t := range toks {
		if r.RevocationEndpoint == "" {
			m.record(ctx, audit.EventAuthorizationRevoked, r, StepConnectFailed, "no_endpoint", false, "")
			left = append(left, t)
			continue
		}
		status, err := m.revoker.post(ctx, r, r.RevocationEndpoint, url.Values{"token": {t.value}, "token_type_hint": {t.hint}})
		ok := err == nil && status == http.StatusOK
		code := t.hint
		switch {
		case err != nil:
			code = "unreachable"
		case !ok:
			code = fmt.Sprintf("http_%d", status)
		default:
			// Where the provider can say so, it must say the token is dead.
			if v, _ := m.revoker.verify(ctx, r, []byte(t.value), t.hint); v == notDead {
				ok, code = false, "still_active"
			}
		}
		m.record(ctx, audit.EventAuthorizationRevoked, r, StepConnectFailed, code, ok, "")
		if !ok {
			left = append(left, t)
		}
	}
	if len(left) == 0 {
		m.log.Info("a connection failed after the provider issued tokens; they were revoked there", "authorization", r.ID)
		m.changed()
		return fmt.Errorf("%w: Yett could not keep %q (%s); the tokens the provider issued were revoked there", ErrFlow, r.Name, why)
	}
	if err := m.keepForRevocation(r, cause, left); err != nil {
		m.log.Error("tokens a failed connection obtained could be neither revoked nor kept", "authorization", r.ID)
		m.record(ctx, audit.EventAuthorizationRevoked, r, StepConnectFailed, "not_kept", false, "")
		return fmt.Errorf("%w: Yett could not keep %q (%s), and the provider did not confirm the revocation of its tokens: revoke the app's access in the provider's settings", ErrFlow, r.Name, why)
	}
	m.revoker.kickRetry()
	m.changed()
	return fmt.Errorf("%w: Yett could not keep %q (%s); the provider did not confirm the revocation of the tokens it issued, so Connections lists them as %q until it does", ErrFlow, r.Name, why, r.Name)
}

// issued is a token a connection obtained, with its RFC 7009 hint.
type issued struct{ hint, value string }

// keepForRevocation stores r as a disabled row whose tokens toks wait in
// the revocation queue, sealed for revocation only. A new authorization
// whose name was taken gets a name of its own; a reconnection's row exists
// and only gets the queue.
func (m *connector) keepForRevocation(r *row, cause error, toks []issued) error {
	rev := RevocationPending
	if r.RevocationEndpoint == "" {
		rev = RevocationFailed
	}
	var exists int64
	m.db.Model(&row{}).Where("id = ?", r.ID).Count(&exists)
	if exists == 0 {
		base := clip(r.Name, 50) + " (failed connection)"
		r.Name = base
		for i := 2; ; i++ {
			var n int64
			if err := m.db.Model(&row{}).Where("name = ?", r.Name).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				break
			}
			r.Name = fmt.Sprintf("%s %d", base, i)
		}
		r.ConnectedAt = m.now().Unix()
		r.SealedAccess, r.SealedRefresh = nil, nil
		r.State, r.Revocation = StateDisabled, rev
		r.StateReason = clip("the connection failed after the provider issued tokens: "+strings.TrimPrefix(cause.Error(), "oauth: "), 200)
		if err := m.db.Create(r).Error; err != nil {
			return err
		}
	} else if err := m.db.Model(&row{}).Where("id = ?", r.ID).Updates(map[string]any{"revocation": rev}).Error; err != nil {
		return err
	}
	for _, t := range toks {
		if err := m.revoker.queueToken(m.db, r.ID, t.hint, []byte(t.value), m.now()); err != nil {
			return err
		}
	}
	return nil
}
