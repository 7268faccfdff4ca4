package providers

import (
	"testing"
)

// FuzzParseMetadata feeds arbitrary documents and issuers to ParseMetadata:
// it never panics, and whatever it accepts names the requested issuer and
// passes Validate(true).
func FuzzParseMetadata(f *testing.F) {
	seeds := []struct{ issuer, body string }{
		{"https://a.example", `{"issuer":"https://a.example","token_endpoint":"https://a.example/t"}`},
		{"http://127.0.0.1:8080/t", `{"issuer":"http://127.0.0.1:8080/t","token_endpoint":"http://127.0.0.1:8080/token","jwks_uri":"http://[::1]/k"}`},
		{"https://a.example", `{"issuer":"https://a.example","token_endpoint":"http://a.example/t"}`},
		{"https://a.example", `{"issuer":"https://a.example","token_endpoint":"https://a.example/t","scopes_supported":["a",1]}`},
		{"https://a.example", `{"issuer":"https://a.example","token_endpoint":"https://a.example/{tenant}"}`},
		{"", `{"issuer":""}`},
		{"https://a.example", `[]`},
		{"https://a.example", `{"issuer":"https://a.example","token_endpoint":"https://a.example/t","issuer":"https://b.example"}`},
		{"https://a.example?", `{"issuer":"https://a.example?","token_endpoint":"https://a.example/t"}`},
	}
	for _, s := range seeds {
		f.Add(s.issuer, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, issuer string, body []byte) {
		m, err := ParseMetadata(issuer, body)
		if err != nil {
			if m != nil {
				t.Fatal("metadata returned with an error")
			}
			return
		}
		if m.Issuer != issuer {
			t.Fatalf("accepted issuer %q for %q", m.Issuer, issuer)
		}
		if err := m.Validate(true); err != nil {
			t.Fatalf("accepted metadata does not validate: %v", err)
		}
	})
}
