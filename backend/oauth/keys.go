package oauth

import (
	"fmt"

	"github.com/yettdev/yett/backend/oauth/proof"
)

const (
	keyPurposeClient = "client"
	keyPurposeDPoP   = "dpop"
)

func dpopKeyID(authorizationID string) string { return "dpop-" + authorizationID }

// ClientKey is a private_key_jwt client key's public half: what the person
// registers with the provider. The private half stays sealed.
type ClientKey struct {
	ID        string `json:"id"`
	PublicJWK string `json:"public_jwk"`
	JWKS      string `json:"jwks"`
}

// NewClientKey generates a P-256 key for private_key_jwt client
// authentication (RFC 7523), seals its private half under the vault and
// returns the public half to register with the provider.
func (m *Custody) NewClientKey() (ClientKey, error) {
	k, err := proof.GenerateKey()
	if err != nil {
		return ClientKey{}, err
	}
	id := "ck-" + k.KeyID()
	if err := m.storeKey(id, keyPurposeClient, k); err != nil {
		return ClientKey{}, err
	}
	return ClientKey{ID: id, PublicJWK: string(k.PublicJWK()), JWKS: string(k.JWKS())}, nil
}

func (m *Custody) newKey(id, purpose string) error {
	k, err := proof.GenerateKey()
	if err != nil {
		return err
	}
	return m.storeKey(id, purpose, k)
}

func (m *Custody) storeKey(id, purpose string, k *proof.Key) error {
	der := k.PKCS8()
	defer clear(der)
	sealed, err := m.vault.SealBlob(purposeKey, tokenAD(id, purpose, 0), der)
	if err != nil {
		return err
	}
	return m.db.Exec(`INSERT INTO oauth_keys (id, purpose, public_jwk, sealed_private, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET purpose = excluded.purpose, public_jwk = excluded.public_jwk, sealed_private = excluded.sealed_private`,
		id, purpose, string(k.PublicJWK()), sealed, m.now().Unix()).Error
}

// loadKey opens a stored private key.
func (m *Custody) loadKey(id string) (*proof.Key, error) {
	var rows []struct {
		Purpose       string
		SealedPrivate []byte
	}
	if err := m.db.Raw(`SELECT purpose, sealed_private FROM oauth_keys WHERE id = ?`, id).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("%w: no such key", ErrNotFound)
	}
	der, err := m.vault.OpenBlob(purposeKey, tokenAD(id, rows[0].Purpose, 0), rows[0].SealedPrivate)
	if err != nil {
		return nil, err
	}
	defer clear(der)
	return proof.ParseKey(der)
}
