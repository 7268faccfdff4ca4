package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"
)

var (
	fuzzNow         = time.Unix(1_800_000_000, 0)
	fuzzURI         = "http://127.0.0.1:1/token"
	fuzzAccessToken = "fuzz-access-token"
)

// FuzzProof feeds arbitrary DPoP header values to the proof verifier. It
// must never panic, must refuse with a proofError (chosen text), and may
// accept only what an independent check of RFC 9449 §4.3 also accepts.
func FuzzProof(f *testing.F) {
	key := newDPoPKey(f)
	valid := func(edit func(*proofSpec)) string {
		s := key.spec("POST", fuzzURI)
		s.iat, s.ath = fuzzNow, ath(fuzzAccessToken)
		if edit != nil {
			edit(&s)
		}
		return key.sign(f, s)
	}
	good := valid(nil)
	want := proofWant{method: "POST", uri: fuzzURI, accessToken: fuzzAccessToken}
	// Without an accepted seed the oracle below would never run.
	if _, err := verifyProof([]string{good}, want, fuzzNow); err != nil {
		f.Fatalf("valid seed refused: %v", err)
	}
	if _, problem := independentProofCheck(good); problem != "" {
		f.Fatalf("oracle refuses the valid seed: its %s", problem)
	}
	parts := strings.Split(good, ".")
	for _, seed := range []string{
		good,
		valid(func(s *proofSpec) { s.htu = "HTTP://127.0.0.1:1/token?q#f" }),
		valid(func(s *proofSpec) { s.typ = "jwt" }),
		valid(func(s *proofSpec) { s.header = map[string]any{"alg": "none"} }),
		valid(func(s *proofSpec) {
			s.jwk = map[string]any{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "d": "AA"}
		}),
		parts[0] + "." + parts[1] + ".",
		parts[0] + "." + parts[1] + "." + parts[2][:20],
		parts[0] + ".e30." + parts[2],
		"", ".", "..", "a.b.c", "eyJ9.e30.",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		pr, err := verifyProof([]string{header}, want, fuzzNow)
		if err != nil {
			var pe *proofError
			if !errors.As(err, &pe) {
				t.Fatalf("refusal is not a proofError: %T", err)
			}
			return
		}
		jkt, problem := independentProofCheck(header)
		if problem != "" {
			t.Fatalf("accepted a proof whose %s", problem)
		}
		if pr.jkt != jkt {
			t.Fatal("accepted proof's thumbprint differs from RFC 7638's")
		}
	})
}

// independentProofCheck re-does RFC 9449 §4.3 for FuzzProof's request with
// plain encoding/json and the big-integer ECDSA API, sharing no code with
// verifyProof. It returns the key's thumbprint or what is wrong.
func independentProofCheck(compact string) (jkt, problem string) {
	seg := strings.Split(compact, ".")
	if len(seg) != 3 {
		return "", "segment count is not 3"
	}
	dec := base64.RawURLEncoding
	var header struct {
		Typ  string          `json:"typ"`
		Alg  string          `json:"alg"`
		Crit json.RawMessage `json:"crit"`
		JWK  map[string]any  `json:"jwk"`
	}
	hb, err1 := dec.DecodeString(seg[0])
	if err1 != nil || json.Unmarshal(hb, &header) != nil {
		return "", "header is not base64url JSON"
	}
	if !strings.EqualFold(header.Typ, "dpop+jwt") || header.Alg != "ES256" || header.Crit != nil {
		return "", "typ, alg or crit is wrong"
	}
	if _, private := header.JWK["d"]; private || header.JWK["kty"] != "EC" || header.JWK["crv"] != "P-256" {
		return "", "jwk is not a public P-256 key"
	}
	xs, _ := header.JWK["x"].(string)
	ys, _ := header.JWK["y"].(string)
	x, errX := dec.DecodeString(xs)
	y, errY := dec.DecodeString(ys)
	if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
		return "", "jwk coordinates are not 32 bytes"
	}
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	sig, err := dec.DecodeString(seg[2])
	digest := sha256.Sum256([]byte(seg[0] + "." + seg[1]))
	if err != nil || len(sig) != 64 ||
		!ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "", "signature does not verify under its jwk"
	}
	var claims struct {
		JTI string   `json:"jti"`
		HTM string   `json:"htm"`
		HTU string   `json:"htu"`
		IAT *float64 `json:"iat"`
		ATH string   `json:"ath"`
	}
	cb, err := dec.DecodeString(seg[1])
	if err != nil || json.Unmarshal(cb, &claims) != nil {
		return "", "claims are not base64url JSON"
	}
	u, err := url.Parse(claims.HTU)
	switch {
	case claims.JTI == "" || claims.IAT == nil:
		return "", "jti or iat is missing"
	case claims.HTM != "POST":
		return "", "htm is not POST"
	case err != nil || !strings.EqualFold(u.Scheme, "http") || !strings.EqualFold(u.Host, "127.0.0.1:1") || u.EscapedPath() != "/token":
		return "", "htu is not the token endpoint"
	case *claims.IAT < float64(fuzzNow.Unix()-60) || *claims.IAT > float64(fuzzNow.Unix()+60):
		return "", "iat is outside ±60 s"
	case claims.ATH != ath(fuzzAccessToken):
		return "", "ath is not the access token's hash"
	}
	canonical, _ := json.Marshal(publicJWK{Crv: "P-256", Kty: "EC", X: dec.EncodeToString(x), Y: dec.EncodeToString(y)})
	sum := sha256.Sum256(canonical)
	return dec.EncodeToString(sum[:]), ""
}
