package proof

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DPoPHeaderType is the typ header of a DPoP proof (RFC 9449 §4.2).
const DPoPHeaderType = "dpop+jwt"

// DPoPProof returns a DPoP proof JWT (RFC 9449 §4.2) for one HTTP request,
// to send in its DPoP header.
//
// Header: typ dpop+jwt, alg ES256, jwk the public key (kty, crv, x, y
// only). Claims: jti random, htm method, htu HTU(rawURL), iat now; nonce
// when the server supplied one (nonce != ""); ath, the base64url SHA-256 of
// accessToken, when the request carries an access token (accessToken != "").
// A zero now means time.Now().
//
// method must be a non-empty HTTP method token and is used as given (HTTP
// methods are case-sensitive). Errors wrap ErrInvalidArgument or
// ErrInvalidURL and never contain the URL or the token.
func (k *Key) DPoPProof(method, rawURL, accessToken, nonce string, now time.Time) (string, error) {
	if !isToken(method) {
		return "", fmt.Errorf("%w: method is not an HTTP method token", ErrInvalidArgument)
	}
	htu, err := HTU(rawURL)
	if err != nil {
		return "", err
	}
	if now.IsZero() {
		now = time.Now()
	}
	claims := dpopClaims{
		ID:       rand.Text(),
		Method:   method,
		URL:      htu,
		IssuedAt: now.Unix(),
		Nonce:    nonce,
	}
	if accessToken != "" {
		claims.AccessTokenHash = AccessTokenHash(accessToken)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["typ"] = DPoPHeaderType
	tok.Header["jwk"] = k.header
	return k.sign(tok)
}

// AccessTokenHash returns the ath value for accessToken: base64url (no
// padding) of SHA-256 over its ASCII bytes (RFC 9449 §4.2).
func AccessTokenHash(accessToken string) string {
	sum := sha256.Sum256([]byte(accessToken))
	return b64(sum[:])
}

type dpopClaims struct {
	ID              string `json:"jti"`
	Method          string `json:"htm"`
	URL             string `json:"htu"`
	IssuedAt        int64  `json:"iat"`
	Nonce           string `json:"nonce,omitempty"`
	AccessTokenHash string `json:"ath,omitempty"`
}

// The methods below let jwt.NewWithClaims take dpopClaims. A proof has no
// exp: the server judges freshness from iat (RFC 9449 §11.1).

func (c dpopClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }
func (c dpopClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}
func (c dpopClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }
func (c dpopClaims) GetIssuer() (string, error)              { return "", nil }
func (c dpopClaims) GetSubject() (string, error)             { return "", nil }
func (c dpopClaims) GetAudience() (jwt.ClaimStrings, error)  { return nil, nil }

// isToken reports whether s is an RFC 9110 token, the syntax of a method.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case isTchar(c):
		default:
			return false
		}
	}
	return true
}

func isTchar(c byte) bool {
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
