package proof

import (
	"testing"
	"time"
)

// BenchmarkDPoPProof is the cost added to each DPoP-bound request.
func BenchmarkDPoPProof(b *testing.B) {
	k := newTestKey(b)
	now := time.Now()
	for b.Loop() {
		if _, err := k.DPoPProof("POST", "https://rs.example/v1/items?page=2", "access-token-value", "server-nonce", now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientAssertion is the cost added to each token request made
// with private_key_jwt.
func BenchmarkClientAssertion(b *testing.B) {
	k := newTestKey(b)
	now := time.Now()
	for b.Loop() {
		if _, err := k.ClientAssertion("yett-client", "https://as.example/oauth/token", now, time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}
