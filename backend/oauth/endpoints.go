package oauth

import (
	"context"
	"fmt"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth/providers"
)

// StepEndpoints names, in an authorization_edited entry, a change of the
// provider endpoints an authorization is revoked and verified at.
const StepEndpoints = "endpoints"

// SetEndpoints adds or corrects authorization id's revocation (RFC 7009)
// and introspection (RFC 7662) endpoints after it was connected: discovery
// leaves introspection empty for providers that publish it elsewhere (Ory
// Hydra keeps it on its admin port), and a drill can verify only what an
// endpoint answers. "" removes one. The rule is connection's: https, or
// http to a loopback host. Only a person calls it (app, CLI); the change
// is audited. Tokens are not touched.
func (m *Custody) SetEndpoints(ctx context.Context, id, revocation, introspection string) error {
	r, err := loadRow(m.db, id)
	if err != nil {
		return notFound(err)
	}
	md := providers.Metadata{TokenEndpoint: r.TokenEndpoint, RevocationEndpoint: revocation, IntrospectionEndpoint: introspection}
	if err := md.Validate(true); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if revocation == r.RevocationEndpoint && introspection == r.IntrospectionEndpoint {
		return nil
	}
	res := m.db.Model(&row{}).Where("id = ?", id).Updates(map[string]any{"revocation_endpoint": revocation, "introspection_endpoint": introspection})
	if res.Error != nil {
		return fmt.Errorf("oauth: %w", res.Error)
	}
	r.RevocationEndpoint, r.IntrospectionEndpoint = revocation, introspection
	m.record(ctx, audit.EventAuthorizationEdited, r, StepEndpoints, "", true, "")
	// Tokens waiting for the provider go to the new endpoint now, and a
	// revocation that failed for want of an endpoint waits again.
	if revocation != "" {
		m.db.Exec(`UPDATE oauth_revocations SET next_attempt = ? WHERE authorization_id = ?`, m.now().Unix(), id)
		m.db.Exec(`UPDATE oauth_authorizations SET revocation = ? WHERE id = ? AND revocation = ? AND EXISTS (SELECT 1 FROM oauth_revocations WHERE authorization_id = ?)`,
			RevocationPending, id, RevocationFailed, id)
		m.revoker.kickRetry()
	}
	m.changed()
	return nil
}
