package proof

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ClientAssertionType is the client_assertion_type form value that goes
// with a client assertion (RFC 7523 §2.2).
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// MaxAssertionTTL is the longest lifetime ClientAssertion accepts. An
// assertion is used once, seconds after it is made; a long one is only a
// longer window for replay.
const MaxAssertionTTL = 5 * time.Minute

// ErrInvalidArgument means a required argument of a signing function is
// empty or out of range. The error names the argument, never its value.
var ErrInvalidArgument = errors.New("proof: invalid argument")

// ClientAssertion returns a signed JWT that authenticates clientID at a
// token endpoint by private_key_jwt (RFC 7523 §3, OpenID Connect Core §9).
// Send it as client_assertion, with client_assertion_type set to
// ClientAssertionType.
//
// Header: alg ES256, typ JWT, kid KeyID(). Claims: iss and sub clientID,
// aud audience (the token endpoint URL, as a single string), jti random, iat
// now, exp now+ttl. A zero now means time.Now(). ttl must be positive and at
// most MaxAssertionTTL.
//
// Errors wrap ErrInvalidArgument.
func (k *Key) ClientAssertion(clientID, audience string, now time.Time, ttl time.Duration) (string, error) {
	switch {
	case clientID == "":
		return "", fmt.Errorf("%w: empty client ID", ErrInvalidArgument)
	case audience == "":
		return "", fmt.Errorf("%w: empty audience", ErrInvalidArgument)
	case ttl <= 0 || ttl > MaxAssertionTTL:
		return "", fmt.Errorf("%w: ttl must be in (0, %v]", ErrInvalidArgument, MaxAssertionTTL)
	}
	if now.IsZero() {
		now = time.Now()
	}
	claims := assertionClaims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  audience,
		ID:        rand.Text(),
		IssuedAt:  now.Unix(),
		ExpiresAt: now.Add(ttl).Unix(),
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = k.thumb
	return k.sign(tok)
}

// sign signs tok; its errors never include the token or the key.
func (k *Key) sign(tok *jwt.Token) (string, error) {
	s, err := tok.SignedString(k.priv)
	if err != nil {
		return "", errors.New("proof: signing failed")
	}
	return s, nil
}

// assertionClaims are the claims of a client assertion. aud is a single
// string, which every server accepts, rather than jwt.ClaimStrings, whose
// encoding depends on a global of the jwt package.
type assertionClaims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	Audience  string `json:"aud"`
	ID        string `json:"jti"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
}

// The methods below let jwt.NewWithClaims take assertionClaims; they are
// not used for validation here.

func (c assertionClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.ExpiresAt, 0)), nil
}
func (c assertionClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}
func (c assertionClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }
func (c assertionClaims) GetIssuer() (string, error)              { return c.Issuer, nil }
func (c assertionClaims) GetSubject() (string, error)             { return c.Subject, nil }
func (c assertionClaims) GetAudience() (jwt.ClaimStrings, error) {
	return jwt.ClaimStrings{c.Audience}, nil
}
