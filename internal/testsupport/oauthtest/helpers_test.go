package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// dpopKey is the test's own proof signer: a P-256 key and jwt/v5, written
// from RFC 9449 §4.2 independently of the provider's verifier.
type dpopKey struct {
	priv *ecdsa.PrivateKey
}

func newDPoPKey(t testing.TB) *dpopKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &dpopKey{priv: priv}
}

type publicJWK struct {
	Crv string `json:"crv"`
	Kty string `json:"kty"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func (k *dpopKey) jwk() publicJWK {
	raw, err := k.priv.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		panic(err)
	}
	enc := base64.RawURLEncoding
	return publicJWK{Crv: "P-256", Kty: "EC", X: enc.EncodeToString(raw[1:33]), Y: enc.EncodeToString(raw[33:])}
}

// thumbprint is RFC 7638: the struct's fields are declared in the required
// lexicographic order and json.Marshal adds no whitespace.
func (k *dpopKey) thumbprint() string {
	b, err := json.Marshal(k.jwk())
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// proofSpec is one proof's content; tests break one field at a time.
type proofSpec struct {
	typ    string
	jwk    any // the jwk header; the signer's public key unless set
	htm    string
	htu    string
	iat    time.Time
	jti    string
	ath    string
	nonce  string
	header map[string]any // extra header parameters
}

func (k *dpopKey) spec(htm, htu string) proofSpec {
	return proofSpec{typ: "dpop+jwt", htm: htm, htu: htu, iat: time.Now(), jti: rand.Text()}
}

func (k *dpopKey) sign(t testing.TB, s proofSpec) string {
	t.Helper()
	claims := jwt.MapClaims{"htm": s.htm, "htu": s.htu, "iat": s.iat.Unix()}
	if s.jti != "" {
		claims["jti"] = s.jti
	}
	if s.ath != "" {
		claims["ath"] = s.ath
	}
	if s.nonce != "" {
		claims["nonce"] = s.nonce
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["typ"] = s.typ
	tok.Header["jwk"] = s.jwk
	if s.jwk == nil {
		tok.Header["jwk"] = k.jwk()
	}
	for name, v := range s.header {
		tok.Header[name] = v
	}
	signed, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// proof signs a proof for a request to htu; for a resource request pass the
// access token for ath.
func (k *dpopKey) proof(t testing.TB, htm, htu, accessToken, nonce string) string {
	t.Helper()
	s := k.spec(htm, htu)
	s.ath = ath(accessToken)
	s.nonce = nonce
	return k.sign(t, s)
}

func ath(accessToken string) string {
	if accessToken == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// reply is a decoded JSON answer. Tests report its "error" member and
// status, never token values.
type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func (r reply) str(name string) string { s, _ := r.body[name].(string); return s }

func (r reply) errorCode() string { return r.str("error") }

func do(t testing.TB, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := reply{status: resp.StatusCode, header: resp.Header, body: map[string]any{}}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s: response is not JSON", req.URL.Path)
		}
	}
	return out
}

// post sends form to path as p's client (client_secret_basic when it has a
// secret), with a DPoP header when proof is not empty.
func post(t testing.TB, p *Provider, path string, form url.Values, proof string) reply {
	t.Helper()
	if !form.Has("client_id") {
		form.Set("client_id", p.opts.ClientID)
	}
	req, err := http.NewRequest(http.MethodPost, p.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if p.opts.ClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(p.opts.ClientID), url.QueryEscape(p.opts.ClientSecret))
	}
	if proof != "" {
		req.Header.Set("DPoP", proof)
	}
	return do(t, req)
}

// callResource calls /resource with Authorization "scheme token".
func callResource(t testing.TB, p *Provider, method, scheme, token, proof string) reply {
	t.Helper()
	req, err := http.NewRequest(method, p.URL+"/resource", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", scheme+" "+token)
	if proof != "" {
		req.Header.Set("DPoP", proof)
	}
	return do(t, req)
}

// startDevice runs device authorization and returns device and user code.
func startDevice(t testing.TB, p *Provider) (deviceCode, userCode string) {
	t.Helper()
	r := post(t, p, "/device_authorization", url.Values{"scope": {"read write"}}, "")
	if r.status != http.StatusOK {
		t.Fatalf("device authorization: %d %s", r.status, r.errorCode())
	}
	return r.str("device_code"), r.str("user_code")
}

func pollDevice(t testing.TB, p *Provider, deviceCode, proof string) reply {
	t.Helper()
	return post(t, p, "/token", url.Values{"grant_type": {GrantDeviceCode}, "device_code": {deviceCode}}, proof)
}

// tokens is an issued pair; its values are never printed.
type tokens struct{ access, refresh, tokenType string }

// deviceTokens runs the device flow to the end as the public client, with
// a proof from key when key is not nil.
func deviceTokens(t testing.TB, p *Provider, key *dpopKey) tokens {
	t.Helper()
	deviceCode, userCode := startDevice(t, p)
	if err := p.ApproveDevice(userCode); err != nil {
		t.Fatal(err)
	}
	var proof string
	if key != nil {
		proof = key.proof(t, http.MethodPost, p.URL+"/token", "", "")
	}
	r := pollDevice(t, p, deviceCode, proof)
	if r.status != http.StatusOK {
		t.Fatalf("device token: %d %s", r.status, r.errorCode())
	}
	return tokens{access: r.str("access_token"), refresh: r.str("refresh_token"), tokenType: r.str("token_type")}
}

func refresh(t testing.TB, p *Provider, refreshToken, proof string) reply {
	t.Helper()
	return post(t, p, "/token", url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {refreshToken}}, proof)
}
