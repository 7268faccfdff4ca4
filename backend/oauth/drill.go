package oauth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/audit"
)

// What custody offers a revocation drill (backend/inventory) besides
// Revoke: switching an authorization off locally without giving up its
// tokens, and asking the provider about its revocation endpoint and its
// refresh token without revoking anything in service.

// Steps recorded in the audit entries of a suspension.
const (
	StepSuspend = "suspend"
	StepResume  = "resume"
)

// Suspend switches authorization id off locally, at once and without any
// network call: its cached access tokens are dropped, the sessions that
// could use it end (subscribers get Event.Disabled) and its operations are
// refused with ErrSuspended. Unlike Revoke it keeps the sealed refresh
// token, so Resume restores it without its owner. Only an active
// authorization is suspended; why names the reason in the audit entry.
func (m *Custody) Suspend(ctx context.Context, id, why string) error {
	var r *row
	err := m.db.Transaction(func(tx *gorm.DB) error {
		var err error
		if r, err = loadRow(tx, id); err != nil {
			return notFound(err)
		}
		if r.State != StateActive {
			return fmt.Errorf("%w: only an active authorization is suspended (it is %s)", ErrInvalid, r.State)
		}
		return tx.Model(&row{}).Where("id = ?", id).Updates(map[string]any{"state": StateSuspended, "state_reason": why}).Error
	})
	if err != nil {
		return err
	}
	m.tokens.dropCache(id)
	m.notify(Event{Disabled: id})
	m.record(ctx, audit.EventAuthorizationDisabled, r, StepSuspend, why, true, "")
	m.changed()
	return nil
}

// Resume puts a suspended authorization back in service. Any other state
// is left as it is (ErrInvalid): a revoked one needs its owner to
// reconnect it.
func (m *Custody) Resume(ctx context.Context, id string) error {
	r, err := loadRow(m.db, id)
	if err != nil {
		return notFound(err)
	}
	res := m.db.Model(&row{}).Where("id = ? AND state = ?", id, StateSuspended).Updates(map[string]any{"state": StateActive, "state_reason": ""})
	if res.Error != nil {
		return fmt.Errorf("oauth: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: only a suspended authorization is resumed (it is %s)", ErrInvalid, r.State)
	}
	m.record(ctx, audit.EventAuthorizationConnected, r, StepResume, "", true, "")
	m.changed()
	return nil
}

// Probe kinds: what RevocationProbe revoked.
const (
	// ProbeFreshToken: an access token obtained for the probe with the
	// client's own credentials (client credentials grant), never in
	// service and in a grant of its own.
	ProbeFreshToken = "fresh_access_token"
	// ProbeUnknownToken: a random value no provider issued. RFC 7009 §2.2
	// answers 200 for it too, so a 200 proves the endpoint is there and
	// takes this client's authentication, not that it revokes.
	ProbeUnknownToken = "unknown_token"
)

// RevocationProbe is what ProbeRevocation learned. It holds no token.
type RevocationProbe struct {
	Endpoint string `json:"endpoint"` // host of the revocation endpoint
	Token    string `json:"token"`    // ProbeFreshToken or ProbeUnknownToken
	// Status is the revocation endpoint's HTTP status; 0 when it could not
	// be reached.
	Status int `json:"status"`
	// Introspected: the provider's introspection was asked about the
	// revoked token afterwards; Active is its answer.
	Introspected        bool `json:"introspected"`
	Active              bool `json:"active"`
	IntrospectionStatus int  `json:"introspection_status,omitempty"`
}

// ErrNoRevocationEndpoint: the provider has no RFC 7009 endpoint Yett
// knows of.
var ErrNoRevocationEndpoint = errors.New("oauth: the provider has no revocation endpoint")

// ProbeRevocation checks authorization id's revocation endpoint without
// touching a token in service. A provider may revoke a refresh token with
// any access token of its grant (RFC 7009 §2.1 allows it, and Ory Hydra
// does: it revokes every token of the grant), so the probe never revokes a
// token of the grant in service. For a client credentials authorization it
// obtains a fresh access token, in a grant of its own, revokes it and asks
// introspection whether it is inactive; for any other it revokes a random
// value (ProbeUnknownToken). Errors: ErrNotFound, ErrNoRevocationEndpoint,
// and ErrProvider when no fresh token could be obtained; an unreachable
// endpoint is Status 0 with no error.
func (m *Custody) ProbeRevocation(ctx context.Context, id string) (RevocationProbe, error) {
	r, err := loadRow(m.db, id)
	if err != nil {
		return RevocationProbe{}, notFound(err)
	}
	p := RevocationProbe{Endpoint: hostOf(r.RevocationEndpoint), Token: ProbeUnknownToken}
	if r.RevocationEndpoint == "" {
		return p, ErrNoRevocationEndpoint
	}
	var tok []byte
	if r.CreatedHow == FlowClientCredentials {
		conf, err := m.tokens.config(r, "")
		if err != nil {
			return p, err
		}
		tctx, err := m.tokens.tokenContext(ctx, r, nil)
		if err != nil {
			return p, err
		}
		t, err := m.connector.clientCredentials(tctx, r, conf)
		if err != nil {
			return p, fmt.Errorf("%w: no fresh access token for the probe (%v)", ErrProvider, flowError(err))
		}
		tok, p.Token = []byte(t.AccessToken), ProbeFreshToken
	} else {
		b := make([]byte, 24)
		rand.Read(b)
		tok = []byte("yett-drill-probe-" + hex.EncodeToString(b))
	}
	defer clear(tok)
	status, err := m.revoker.post(ctx, r, r.RevocationEndpoint, url.Values{"token": {string(tok)}, "token_type_hint": {"access_token"}})
	if err == nil {
		p.Status = status
	}
	if p.Token == ProbeFreshToken && p.Status == http.StatusOK && r.IntrospectionEndpoint != "" {
		p.Introspected = true
		p.Active, p.IntrospectionStatus = m.revoker.introspect(ctx, r, tok, "access_token")
	}
	return p, nil
}

// RefreshCheck is the provider's word on an authorization's stored refresh
// token. It holds no token.
type RefreshCheck struct {
	// Held: Yett holds a refresh token for it.
	Held bool `json:"held"`
	// Introspected: the provider's introspection answered (Status 200);
	// Active is its answer.
	Introspected bool `json:"introspected"`
	Active       bool `json:"active"`
	Status       int  `json:"status,omitempty"`
	// NoEndpoint: Yett knows no introspection endpoint for the provider,
	// so nothing was asked (SetEndpoints adds one).
	NoEndpoint bool `json:"no_endpoint,omitempty"`
}

// CheckRefreshToken asks the provider's introspection (RFC 7662) whether
// authorization id's stored refresh token is active. It sends nothing that
// changes it: no refresh, no revocation.
func (m *Custody) CheckRefreshToken(ctx context.Context, id string) (RefreshCheck, error) {
	r, err := loadRow(m.db, id)
	if err != nil {
		return RefreshCheck{}, notFound(err)
	}
	if len(r.SealedRefresh) == 0 {
		return RefreshCheck{}, nil
	}
	rt, err := m.vault.OpenBlob(purposeToken, tokenAD(r.ID, "refresh", r.Generation), r.SealedRefresh)
	if err != nil {
		return RefreshCheck{}, err
	}
	defer clear(rt)
	c := RefreshCheck{Held: true}
	if r.IntrospectionEndpoint == "" {
		c.NoEndpoint = true
		return c, nil
	}
	c.Active, c.Status = m.revoker.introspect(ctx, r, rt, "refresh_token")
	c.Introspected = c.Status == http.StatusOK
	return c, nil
}

// introspect asks r's introspection endpoint about tok; the status is 0
// when it could not be reached, and active is false unless it answered
// 200 with active true.
func (m *revoker) introspect(ctx context.Context, r *row, tok []byte, hint string) (active bool, status int) {
	body, status, err := m.postRead(ctx, r, r.IntrospectionEndpoint, url.Values{"token": {string(tok)}, "token_type_hint": {hint}})
	if err != nil {
		return false, 0
	}
	var ans struct {
		Active bool `json:"active"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &ans) != nil {
		return false, status
	}
	return ans.Active, status
}
