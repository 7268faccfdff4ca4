package proof

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var fixedNow = time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)

// parseAssertion verifies tok as a token endpoint would and returns its
// claims and header.
func parseAssertion(t *testing.T, tok string, pub *ecdsa.PublicKey, clientID, aud string) (jwt.MapClaims, map[string]any) {
	t.Helper()
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"ES256"}),
		jwt.WithTimeFunc(func() time.Time { return fixedNow.Add(30 * time.Second) }),
		jwt.WithIssuer(clientID), jwt.WithSubject(clientID), jwt.WithAudience(aud),
		jwt.WithIssuedAt(), jwt.WithExpirationRequired(), jwt.WithStrictDecoding())
	if err != nil {
		t.Fatalf("assertion does not verify: %v", err)
	}
	return claims, parsed.Header
}

func TestClientAssertion(t *testing.T) {
	k := newTestKey(t)
	const clientID, aud = "yett-client", "https://as.example/oauth/token"
	tok, err := k.ClientAssertion(clientID, aud, fixedNow, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	claims, header := parseAssertion(t, tok, &k.priv.PublicKey, clientID, aud)
	if header["kid"] != k.KeyID() || header["alg"] != "ES256" || header["typ"] != "JWT" {
		t.Errorf("header = %v", header)
	}
	if claims["aud"] != aud {
		t.Errorf("aud = %v, want the single string %q", claims["aud"], aud)
	}
	if claims["iat"] != float64(fixedNow.Unix()) || claims["exp"] != float64(fixedNow.Add(2*time.Minute).Unix()) {
		t.Errorf("iat/exp = %v/%v", claims["iat"], claims["exp"])
	}
	jti, _ := claims["jti"].(string)
	if len(jti) < 22 {
		t.Errorf("jti %q is too short to be unguessable", jti)
	}
	if len(claims) != 6 {
		t.Errorf("unexpected claims: %v", claims)
	}

	// A different key does not verify it; a second assertion has another jti.
	other := newTestKey(t)
	if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return &other.priv.PublicKey, nil },
		jwt.WithTimeFunc(func() time.Time { return fixedNow })); !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
		t.Errorf("verified with another key: %v", err)
	}
	tok2, _ := k.ClientAssertion(clientID, aud, fixedNow, time.Minute)
	claims2, _ := parseAssertion(t, tok2, &k.priv.PublicKey, clientID, aud)
	if claims2["jti"] == jti {
		t.Error("jti repeated")
	}
	// Expired after its ttl.
	if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return &k.priv.PublicKey, nil },
		jwt.WithTimeFunc(func() time.Time { return fixedNow.Add(3 * time.Minute) })); !errors.Is(err, jwt.ErrTokenExpired) {
		t.Errorf("not expired after ttl: %v", err)
	}
}

func TestClientAssertionArguments(t *testing.T) {
	k := newTestKey(t)
	tests := []struct {
		name          string
		clientID, aud string
		ttl           time.Duration
		ok            bool
	}{
		{"five minutes", "c", "https://as.example/token", 5 * time.Minute, true},
		{"one second", "c", "https://as.example/token", time.Second, true},
		{"over five minutes", "c", "https://as.example/token", 5*time.Minute + time.Second, false},
		{"zero ttl", "c", "https://as.example/token", 0, false},
		{"negative ttl", "c", "https://as.example/token", -time.Minute, false},
		{"no client", "", "https://as.example/token", time.Minute, false},
		{"no audience", "c", "", time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.ClientAssertion(tt.clientID, tt.aud, fixedNow, tt.ttl)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("err = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// verifyDPoP checks a proof the way RFC 9449 §4.3 has a server do it: the
// key comes from the proof's own jwk header.
func verifyDPoP(t *testing.T, proof string) (jwt.MapClaims, map[string]any) {
	t.Helper()
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(proof, claims, func(tok *jwt.Token) (any, error) {
		jwk, ok := tok.Header["jwk"].(map[string]any)
		if !ok {
			return nil, errors.New("no jwk header")
		}
		if jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
			return nil, errors.New("not a P-256 jwk")
		}
		x, errX := base64.RawURLEncoding.DecodeString(jwk["x"].(string))
		y, errY := base64.RawURLEncoding.DecodeString(jwk["y"].(string))
		if errX != nil || errY != nil {
			return nil, errors.New("bad coordinates")
		}
		return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return fixedNow }), jwt.WithStrictDecoding())
	if err != nil {
		t.Fatalf("proof does not verify: %v", err)
	}
	return claims, parsed.Header
}

func TestDPoPProof(t *testing.T) {
	k := newTestKey(t)
	tests := []struct {
		name, method, url, token, nonce string
		htu                             string
	}{
		{"token request", "POST", "https://as.example/token", "", "", "https://as.example/token"},
		{"resource with token and nonce", "GET", "https://rs.example/v1/items?page=2&access_token=q#frag", "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU", "eyJ7S_zG.eyJH0-Z.HX4w-7v", "https://rs.example/v1/items"},
		{"nonce without token", "POST", "https://as.example/token", "", "n-0S6_WzA2Mj", "https://as.example/token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proof, err := k.DPoPProof(tt.method, tt.url, tt.token, tt.nonce, fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			claims, header := verifyDPoP(t, proof)
			if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
				t.Errorf("header = %v", header)
			}
			jwk := header["jwk"].(map[string]any)
			if _, ok := jwk["d"]; ok || len(jwk) != 4 {
				t.Fatalf("jwk header = %v, want only kty, crv, x, y", jwk)
			}
			if got := ecThumbprint(jwk["x"].(string), jwk["y"].(string)); got != k.Thumbprint() {
				t.Errorf("jkt of the header key = %s, want %s", got, k.Thumbprint())
			}
			if claims["htm"] != tt.method || claims["htu"] != tt.htu || claims["iat"] != float64(fixedNow.Unix()) {
				t.Errorf("claims = %v", claims)
			}
			if jti, _ := claims["jti"].(string); len(jti) < 22 {
				t.Errorf("jti = %q", jti)
			}
			checkOptional(t, claims, "nonce", tt.nonce)
			if tt.token == "" {
				checkOptional(t, claims, "ath", "")
			} else {
				checkOptional(t, claims, "ath", AccessTokenHash(tt.token))
			}
		})
	}
}

func checkOptional(t *testing.T, claims jwt.MapClaims, name, want string) {
	t.Helper()
	got, present := claims[name]
	switch {
	case want == "" && present:
		t.Errorf("%s present: %v", name, got)
	case want != "" && got != want:
		t.Errorf("%s = %v, want %q", name, got, want)
	}
}

// The access token and ath value of RFC 9449 §7.1's example, and a hash
// computed by hand.
func TestAccessTokenHash(t *testing.T) {
	if got, want := AccessTokenHash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"), "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"; got != want {
		t.Errorf("ath = %s, want %s", got, want)
	}
	// SHA-256("abc") is ba7816bf...f20015ad, base64url without padding:
	if got, want := AccessTokenHash("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"; got != want {
		t.Errorf("ath(abc) = %s, want %s", got, want)
	}
}

func TestDPoPProofRefuses(t *testing.T) {
	k := newTestKey(t)
	const secret = "SECRET-QUERY-VALUE"
	tests := []struct{ name, method, url string }{
		{"empty method", "", "https://rs.example/x"},
		{"method with space", "GET X", "https://rs.example/x"},
		{"relative URL", "GET", "/x?token=" + secret},
		{"ftp", "GET", "ftp://rs.example/x?token=" + secret},
		{"no host", "GET", "https:///x?token=" + secret},
		{"userinfo", "GET", "https://user:" + secret + "@rs.example/x"},
		{"bad escape", "GET", "https://rs.example/%zz?token=" + secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.DPoPProof(tt.method, tt.url, "tok-"+secret, "", fixedNow)
			if !errors.Is(err, ErrInvalidArgument) && !errors.Is(err, ErrInvalidURL) {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "rs.example") {
				t.Errorf("error echoes its input: %v", err)
			}
		})
	}
}

func TestHTU(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://rs.example/v1/items", "https://rs.example/v1/items"},
		{"https://rs.example/v1/items?x=1", "https://rs.example/v1/items"},
		{"https://rs.example/v1/items#frag", "https://rs.example/v1/items"},
		{"https://rs.example/v1/items?x=1#frag", "https://rs.example/v1/items"},
		{"https://rs.example/v1/items?", "https://rs.example/v1/items"},
		{"HTTPS://RS.Example/Path", "https://rs.example/Path"},
		{"https://rs.example", "https://rs.example/"},
		{"https://rs.example?x", "https://rs.example/"},
		{"https://rs.example:443/a", "https://rs.example/a"},
		{"http://rs.example:80/a", "http://rs.example/a"},
		{"https://rs.example:8443/a", "https://rs.example:8443/a"},
		{"http://rs.example:443/a", "http://rs.example:443/a"},
		{"https://rs.example/a/./b/../c", "https://rs.example/a/c"},
		{"https://rs.example/a/..", "https://rs.example/"},
		{"https://rs.example/v1.0/x", "https://rs.example/v1.0/x"},
		{"https://rs.example/%7euser/%2fx%3a", "https://rs.example/~user/%2Fx%3A"},
		{"https://rs.example/a%20b", "https://rs.example/a%20b"},
		{"http://[::1]:8080/t", "http://[::1]:8080/t"},
		{"https://[2001:DB8::1]/t", "https://[2001:db8::1]/t"},
		{"https://[2001:db8::1]:443/t", "https://[2001:db8::1]/t"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := HTU(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("HTU = %q, want %q", got, tt.want)
			}
			if again, _ := HTU(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

// Proofs are small JSON objects; check the claims are exactly those listed.
func TestDPoPClaimSet(t *testing.T) {
	k := newTestKey(t)
	proof, err := k.DPoPProof("POST", "https://as.example/token", "at", "n", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(proof, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"jti", "htm", "htu", "iat", "nonce", "ath"} {
		if _, ok := claims[name]; !ok {
			t.Errorf("missing %s", name)
		}
		delete(claims, name)
	}
	if len(claims) != 0 {
		t.Errorf("extra claims: %v", claims)
	}
}

// One Key signs from many goroutines at once (run with -race).
func TestConcurrentSigning(t *testing.T) {
	k := newTestKey(t)
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			var err error
			if i%2 == 0 {
				_, err = k.DPoPProof("GET", "https://rs.example/x", "at", "", fixedNow)
			} else {
				_, err = k.ClientAssertion("c", "https://as.example/token", fixedNow, time.Minute)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
