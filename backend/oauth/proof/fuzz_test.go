package proof

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzHTU: HTU never panics, and what it returns is an absolute http(s) URL
// without query or fragment that HTU maps to itself.
func FuzzHTU(f *testing.F) {
	for _, s := range []string{
		"https://rs.example/a?b#c", "HTTP://[::1]:80/%7e/../x", "https://rs.example", "https://u@h/",
		"https://rs.example/a/./b/../../..", "http://h:0/%2f%2E%2e", "https://h/?#", "//h/x", "https://h/a%",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := HTU(raw)
		if err != nil {
			return
		}
		if strings.ContainsAny(got, "?#") {
			t.Fatalf("HTU(%q) = %q keeps a query or fragment", raw, got)
		}
		u, err := url.Parse(got)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("HTU(%q) = %q is not an absolute http(s) URL", raw, got)
		}
		if again, err := HTU(got); err != nil || again != got {
			t.Fatalf("HTU not idempotent: %q -> %q -> %q (%v)", raw, got, again, err)
		}
	})
}

// FuzzParseKey: ParseKey never panics, and a key it accepts round-trips.
func FuzzParseKey(f *testing.F) {
	k, err := GenerateKey()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(k.PKCS8())
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		k, err := ParseKey(der)
		if err != nil {
			return
		}
		k2, err := ParseKey(k.PKCS8())
		if err != nil || k2.Thumbprint() != k.Thumbprint() {
			t.Fatalf("accepted key does not round-trip: %v", err)
		}
	})
}
