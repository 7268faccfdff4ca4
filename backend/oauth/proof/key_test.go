package proof

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"
)

func newTestKey(t testing.TB) *Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// privateScalar is d as the decimal and hex forms a leak would show.
func privateScalar(t *testing.T, k *Key) []string {
	t.Helper()
	d, err := k.priv.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return []string{new(big.Int).SetBytes(d).String(), hex.EncodeToString(d), b64(d)}
}

func TestPKCS8RoundTrip(t *testing.T) {
	k := newTestKey(t)
	der := k.PKCS8()
	k2, err := ParseKey(der)
	if err != nil {
		t.Fatal(err)
	}
	if k2.Thumbprint() != k.Thumbprint() || !bytes.Equal(k2.PKCS8(), der) {
		t.Fatal("round trip changed the key")
	}
	if !bytes.Equal(k2.PublicJWK(), k.PublicJWK()) {
		t.Error("round trip changed the public JWK")
	}
	// What the parsed key signs, the original public key verifies.
	tok, err := k2.ClientAssertion("c", "https://as.example/token", fixedNow, MaxAssertionTTL)
	if err != nil {
		t.Fatal(err)
	}
	parseAssertion(t, tok, &k.priv.PublicKey, "c", "https://as.example/token")

	der[len(der)-1] ^= 1 // PKCS8 returns a copy
	if !bytes.Equal(k.PKCS8(), k2.PKCS8()) {
		t.Error("PKCS8 returned the key's own buffer")
	}
}

func TestParseKeyRefuses(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384DER, _ := x509.MarshalPKCS8PrivateKey(p384)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sec1DER, _ := x509.MarshalECPrivateKey(p256)
	good := newTestKey(t).PKCS8()

	tests := map[string][]byte{
		"empty":          nil,
		"garbage":        []byte("not a key at all"),
		"P-384":          p384DER,
		"RSA":            rsaDER,
		"SEC1 not PKCS8": sec1DER,
		"truncated":      good[:len(good)-3],
		"trailing data":  append(append([]byte(nil), good...), 0),
	}
	for name, der := range tests {
		t.Run(name, func(t *testing.T) {
			k, err := ParseKey(der)
			if !errors.Is(err, ErrInvalidKey) || k != nil {
				t.Fatalf("ParseKey = %v, %v; want ErrInvalidKey", k, err)
			}
			if err.Error() != ErrInvalidKey.Error() {
				t.Errorf("error carries more than the sentinel: %v", err)
			}
		})
	}
}

func TestPublicJWK(t *testing.T) {
	k := newTestKey(t)
	var jwk map[string]string
	if err := json.Unmarshal(k.PublicJWK(), &jwk); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"kty": "EC", "crv": "P-256", "kid": k.Thumbprint(), "alg": "ES256", "use": "sig"}
	for name, v := range want {
		if jwk[name] != v {
			t.Errorf("%s = %q, want %q", name, jwk[name], v)
		}
	}
	if _, ok := jwk["d"]; ok {
		t.Fatal(`public JWK has "d"`)
	}
	if len(jwk) != 7 {
		t.Errorf("unexpected members: %v", jwk)
	}
	// x and y are the full 32-byte coordinates of the public key.
	point, _ := k.priv.PublicKey.Bytes()
	if jwk["x"] != b64(point[1:33]) || jwk["y"] != b64(point[33:]) {
		t.Error("x or y is not the public point")
	}
	for _, s := range privateScalar(t, k) {
		if strings.Contains(string(k.PublicJWK()), s) || strings.Contains(string(k.JWKS()), s) {
			t.Fatal("the private scalar is in the public JWK")
		}
	}

	var set struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(k.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || !bytes.Equal(set.Keys[0], k.PublicJWK()) {
		t.Errorf("JWKS = %s", k.JWKS())
	}
	if k.KeyID() != k.Thumbprint() {
		t.Error("KeyID is not the thumbprint")
	}
}

// RFC 7638 §3.1: the RSA example key and its thumbprint check the hashing
// and encoding step shared with the EC thumbprint.
func TestThumbprintRFC7638Example(t *testing.T) {
	const n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
	canonical := `{"e":"AQAB","kty":"RSA","n":"` + n + `"}`
	if got, want := thumbprintOf([]byte(canonical)), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; got != want {
		t.Fatalf("thumbprint = %s, want %s", got, want)
	}
}

// The EC thumbprint, computed here by hand from the canonical JSON of
// RFC 7638 §3.2 (members crv, kty, x, y in that order, no whitespace).
func TestThumbprintEC(t *testing.T) {
	k := newTestKey(t)
	point, _ := k.priv.PublicKey.Bytes()
	enc := base64.RawURLEncoding
	canonical := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`,
		enc.EncodeToString(point[1:33]), enc.EncodeToString(point[33:65]))
	sum := sha256.Sum256([]byte(canonical))
	if want := enc.EncodeToString(sum[:]); k.Thumbprint() != want {
		t.Fatalf("thumbprint = %s, want %s", k.Thumbprint(), want)
	}
}

// The EC key of RFC 9449's examples and the jkt RFC 9449 §6.1 gives for it.
func TestThumbprintRFC9449Example(t *testing.T) {
	got := ecThumbprint("l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs", "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
	if want := "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"; got != want {
		t.Fatalf("jkt = %s, want %s", got, want)
	}
}

func TestKeyNeverPrintsPrivateHalf(t *testing.T) {
	k := newTestKey(t)
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("key", "k", k)
	asJSON, err := json.Marshal(struct{ K *Key }{k})
	if err != nil {
		t.Fatal(err)
	}
	outputs := []string{
		fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %d %x", k, k, k, k, k, k),
		fmt.Sprintf("%v", []*Key{k}), fmt.Sprintf("%+v", struct{ K *Key }{k}),
		fmt.Errorf("wrapped: %v", k).Error(), logged.String(), string(asJSON),
	}
	for _, out := range outputs {
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("not redacted: %s", out)
		}
		for _, s := range privateScalar(t, k) {
			if strings.Contains(out, s) {
				t.Fatalf("private scalar printed: %s", out)
			}
		}
	}
}
