package hydratest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"net/http"
	"sync"
)

// idTokenKeySet is the key set Hydra signs ID tokens with (x.OpenIDConnectKeyName).
const idTokenKeySet = "hydra.openid.id-token"

// idTokenKey is one RSA-2048 key per test process. Left alone, Hydra makes an
// RSA-4096 key during the first authorization of each fresh database, which
// took 1 to 4 s on a loaded two-core machine: longer than starting Hydra.
// Every Hydra gets this key under its own kid; tests that compare ID tokens
// across two Hydras must not rely on the key material differing.
var idTokenKey struct {
	once sync.Once
	key  *rsa.PrivateKey
	err  error
}

// seedIDTokenKey installs the process's RSA key as h's ID token signing key,
// so Hydra keeps its default algorithm (RS256) without generating one.
func (h *Hydra) seedIDTokenKey() error {
	idTokenKey.once.Do(func() {
		idTokenKey.key, idTokenKey.err = rsa.GenerateKey(rand.Reader, 2048)
	})
	if idTokenKey.err != nil {
		return idTokenKey.err
	}
	k := idTokenKey.key
	b64 := func(i *big.Int) string { return base64.RawURLEncoding.EncodeToString(i.Bytes()) }
	jwk := map[string]string{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "hydratest-" + randomHex(8),
		"n": b64(k.N), "e": b64(big.NewInt(int64(k.E))), "d": b64(k.D),
		"p": b64(k.Primes[0]), "q": b64(k.Primes[1]),
		"dp": b64(k.Precomputed.Dp), "dq": b64(k.Precomputed.Dq), "qi": b64(k.Precomputed.Qinv),
	}
	// Hydra echoes the private key in its answer: it is not decoded.
	return h.adminJSON(http.MethodPut, "/admin/keys/"+idTokenKeySet, nil, map[string]any{"keys": []any{jwk}}, nil)
}
