package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	dpopAlg = "ES256"
	dpopTyp = "dpop+jwt"
	// proofWindow is how far iat may be from the server's clock either way.
	proofWindow = 60 * time.Second
)

// privateJWKMembers are the JWK members (RFC 7518 §6) that carry private or
// symmetric key material; a proof's jwk must have none (RFC 9449 §4.3).
var privateJWKMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

var b64 = base64.RawURLEncoding

// proofError says why a DPoP proof was refused, in text safe to send back.
type proofError struct{ reason string }

func (e *proofError) Error() string { return "DPoP proof: " + e.reason }

func badProof(reason string) error { return &proofError{reason} }

// proofWant is what a proof must match: the request it arrived with.
type proofWant struct {
	method      string
	uri         string // the request URI; compared after normalizeHTU
	accessToken string // when set, ath must be its SHA-256 (RFC 9449 §4.3 check 12)
}

// proof is what a verified proof establishes.
type proof struct {
	jkt   string // RFC 7638 thumbprint of the signing key
	jti   string
	nonce string
}

// proofClaims are the claims of RFC 9449 §4.2. It implements jwt.Claims
// only so jwt/v5 can decode it: claims validation is off and the getters
// are never consulted.
type proofClaims struct {
	JTI   string   `json:"jti"`
	HTM   string   `json:"htm"`
	HTU   string   `json:"htu"`
	IAT   *float64 `json:"iat"` // a JSON number; jwt.NumericDate would also take a string
	ATH   string   `json:"ath"`
	Nonce string   `json:"nonce"`
}

func (proofClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }
func (proofClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return nil, nil }
func (proofClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (proofClaims) GetIssuer() (string, error)                   { return "", nil }
func (proofClaims) GetSubject() (string, error)                  { return "", nil }
func (proofClaims) GetAudience() (jwt.ClaimStrings, error)       { return nil, nil }

var proofParser = jwt.NewParser(
	jwt.WithValidMethods([]string{dpopAlg}),
	jwt.WithoutClaimsValidation(), // iat is checked below, with RFC 9449 rules
	jwt.WithStrictDecoding(),
)

// verifyProof makes the stateless checks of RFC 9449 §4.3 on the DPoP header
// values of one request. jti replay and nonces need server state and are
// checked by the caller.
func verifyProof(values []string, want proofWant, now time.Time) (*proof, error) {
	if len(values) != 1 {
		return nil, badProof("exactly one DPoP header is required")
	}
	var claims proofClaims
	var jkt string
	var keyErr error
	_, err := proofParser.ParseWithClaims(values[0], &claims, func(t *jwt.Token) (any, error) {
		key, thumb, err := proofKey(t.Header)
		jkt, keyErr = thumb, err
		return key, err
	})
	switch {
	case keyErr != nil:
		return nil, keyErr
	case err != nil:
		return nil, badProof("not a JWS signed with ES256 by its jwk")
	case claims.JTI == "":
		return nil, badProof("jti missing")
	case claims.IAT == nil:
		return nil, badProof("iat missing")
	case claims.HTM != want.method:
		return nil, badProof("htm does not match the request method")
	}
	htu, err := normalizeHTU(claims.HTU)
	if err != nil {
		return nil, err
	}
	reqURI, err := normalizeHTU(want.uri)
	if err != nil || htu != reqURI {
		return nil, badProof("htu does not match the request URI")
	}
	// Compared in float seconds so that no iat, however large, overflows.
	age := float64(now.UnixNano())/1e9 - *claims.IAT
	if age < -proofWindow.Seconds() || age > proofWindow.Seconds() {
		return nil, badProof("iat outside the accepted window")
	}
	if want.accessToken != "" {
		sum := sha256.Sum256([]byte(want.accessToken))
		if subtle.ConstantTimeCompare([]byte(claims.ATH), []byte(b64.EncodeToString(sum[:]))) != 1 {
			return nil, badProof("ath does not match the access token")
		}
	}
	return &proof{jkt: jkt, jti: claims.JTI, nonce: claims.Nonce}, nil
}

// proofKey checks the JOSE header of a proof and returns the public key in
// its jwk member with that key's thumbprint.
func proofKey(header map[string]any) (*ecdsa.PublicKey, string, error) {
	if typ, _ := header["typ"].(string); !strings.EqualFold(typ, dpopTyp) {
		return nil, "", badProof("typ must be dpop+jwt")
	}
	if _, ok := header["crit"]; ok {
		return nil, "", badProof("crit header parameters are not understood")
	}
	jwk, ok := header["jwk"].(map[string]any)
	if !ok {
		return nil, "", badProof("jwk header missing")
	}
	for _, m := range privateJWKMembers {
		if _, ok := jwk[m]; ok {
			return nil, "", badProof("jwk contains private key material")
		}
	}
	kty, _ := jwk["kty"].(string)
	crv, _ := jwk["crv"].(string)
	if kty != "EC" || crv != "P-256" {
		return nil, "", badProof("jwk must be an EC P-256 key")
	}
	x, errX := coordinate(jwk["x"])
	y, errY := coordinate(jwk["y"])
	if errX != nil || errY != nil {
		return nil, "", badProof("jwk x and y must be 32-byte base64url coordinates")
	}
	point := append(append([]byte{4}, x...), y...)
	key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
	if err != nil {
		return nil, "", badProof("jwk is not a point on P-256")
	}
	return key, jwkThumbprint(x, y), nil
}

func coordinate(v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, errors.New("not a string")
	}
	b, err := b64.Strict().DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, errors.New("not a 32-byte coordinate")
	}
	return b, nil
}

// jwkThumbprint is the RFC 7638 §3 thumbprint of a P-256 key: SHA-256 of the
// required members in lexicographic order without whitespace. It is built
// from the decoded coordinates so that one key has one thumbprint.
func jwkThumbprint(x, y []byte) string {
	canonical := `{"crv":"P-256","kty":"EC","x":"` + b64.EncodeToString(x) + `","y":"` + b64.EncodeToString(y) + `"}`
	sum := sha256.Sum256([]byte(canonical))
	return b64.EncodeToString(sum[:])
}

// normalizeHTU applies the syntax- and scheme-based normalization RFC 9449
// §4.3 recommends (RFC 3986 §6.2.2–6.2.3) and drops query and fragment.
func normalizeHTU(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", badProof("htu is not an absolute http(s) URI")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	switch {
	case scheme == "http":
		host = strings.TrimSuffix(host, ":80")
	case scheme == "https":
		host = strings.TrimSuffix(host, ":443")
	default:
		return "", badProof("htu is not an absolute http(s) URI")
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path, nil
}

// nonceSet holds the DPoP nonces one server has handed out (RFC 9449 §8).
type nonceSet map[string]struct{}

func (s nonceSet) issue() string {
	n := randomToken()
	s[n] = struct{}{}
	return n
}

func (s nonceSet) valid(n string) bool {
	_, ok := s[n]
	return n != "" && ok
}

// checkProofState makes the stateful checks of RFC 9449 §4.3: a jti is
// accepted once, and with nonces on, the proof must carry one of nonces.
// It returns the nonce to challenge with when that check fails.
// The caller holds p.mu.
func (p *Provider) checkProofState(pr *proof, nonces nonceSet, now time.Time) (challenge string, err error) {
	for jti, forget := range p.seenJTI {
		if now.After(forget) {
			delete(p.seenJTI, jti)
		}
	}
	if _, seen := p.seenJTI[pr.jti]; seen {
		return "", badProof("jti was already used")
	}
	// Twice the window: a proof older than that fails the iat check.
	p.seenJTI[pr.jti] = now.Add(2 * proofWindow)
	if p.opts.DPoPNonce && !nonces.valid(pr.nonce) {
		return nonces.issue(), nil
	}
	return "", nil
}
