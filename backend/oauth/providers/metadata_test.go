package providers

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMetadata(t *testing.T) {
	const issuer = "https://auth.example.com/tenant"
	tests := []struct {
		name string
		body string
		want error // nil: accepted
	}{
		{"minimal", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"https://auth.example.com/token"}`, nil},
		{"query in endpoint is allowed", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"https://auth.example.com/token?v=2"}`, nil},
		{"loopback http endpoint", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"http://[::1]:8080/token"}`, nil},
		{"unknown fields ignored", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"https://a.example/t","x":{"y":[1]}}`, nil},
		{"missing issuer", `{"token_endpoint":"https://auth.example.com/token"}`, ErrInvalidMetadata},
		{"other issuer", `{"issuer":"https://auth.example.com","token_endpoint":"https://auth.example.com/token"}`, ErrIssuerMismatch},
		{"issuer differs in case", `{"issuer":"https://AUTH.example.com/tenant","token_endpoint":"https://auth.example.com/token"}`, ErrIssuerMismatch},
		{"missing token endpoint", `{"issuer":"https://auth.example.com/tenant"}`, ErrInvalidMetadata},
		{"http endpoint", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"http://auth.example.com/token"}`, ErrInsecureEndpoint},
		{"http jwks", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"https://a.example/t","jwks_uri":"http://a.example/k"}`, ErrInsecureEndpoint},
		{"relative endpoint", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"/token"}`, ErrInvalidMetadata},
		{"fragment", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"https://a.example/t#x"}`, ErrInvalidMetadata},
		{"userinfo in URL", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"https://u:p@a.example/t"}`, ErrInvalidMetadata},
		{"javascript scheme", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"javascript:alert(1)"}`, ErrInvalidMetadata},
		{"array", `[]`, ErrInvalidMetadata},
		{"null", `null`, ErrInvalidMetadata},
		{"truncated", `{"issuer":`, ErrInvalidMetadata},
		{"issuer not a string", `{"issuer":1}`, ErrInvalidMetadata},
		{"bool as string", `{"issuer":"https://auth.example.com/tenant","token_endpoint":"https://a.example/t","authorization_response_iss_parameter_supported":"yes"}`, ErrInvalidMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMetadata(issuer, []byte(tt.body))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if m.Issuer != issuer {
					t.Errorf("issuer = %q", m.Issuer)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// Errors name the field and never carry the text of the document.
func TestParseMetadataErrorsNameTheField(t *testing.T) {
	const marker = "SECRET-LOOKING-MARKER"
	tests := []struct{ body, field string }{
		{`{"issuer":"https://a.example","token_endpoint":"https://a.example/t","revocation_endpoint":"http://` + marker + `.example/r"}`, "revocation_endpoint"},
		{`{"issuer":"https://a.example","token_endpoint":"https://a.example/t","grant_types_supported":"` + marker + `"}`, "grant_types_supported"},
		{`{"issuer":"https://a.example","token_endpoint":"https://a.example/t#` + marker + `"}`, "token_endpoint"},
		{`{"issuer":"https://a.example","token_endpoint":` + marker + `}`, "byte"},
	}
	for _, tt := range tests {
		_, err := ParseMetadata("https://a.example", []byte(tt.body))
		if err == nil {
			t.Fatalf("accepted %s", tt.body)
		}
		if strings.Contains(err.Error(), marker) {
			t.Errorf("error echoes input: %v", err)
		}
		if !strings.Contains(err.Error(), tt.field) {
			t.Errorf("error %q does not name %s", err, tt.field)
		}
	}
}

func TestValidateSchemeRule(t *testing.T) {
	tests := []struct {
		url          string
		strict, open bool // accepted with and without requireLoopbackOrHTTPS
	}{
		{"https://auth.example.com/token", true, true},
		{"http://127.0.0.1:9/token", true, true},
		{"http://127.8.9.10/token", true, true},
		{"http://[::1]/token", true, true},
		{"http://localhost:8080/token", true, true},
		{"http://LOCALHOST/token", true, true},
		{"http://auth.example.com/token", false, true},
		{"http://localhost.example.com/token", false, true},
		{"http://10.0.0.1/token", false, true},
		{"http://[::ffff:127.0.0.1]/token", true, true},
		{"ws://localhost/token", false, false},
		{"https:///token", false, false},
		{"https://login.microsoftonline.com/{tenant}/token", false, false},
	}
	for _, tt := range tests {
		m := Metadata{TokenEndpoint: tt.url}
		if got := m.Validate(true) == nil; got != tt.strict {
			t.Errorf("Validate(true) on %s: accepted = %v", tt.url, got)
		}
		if got := m.Validate(false) == nil; got != tt.open {
			t.Errorf("Validate(false) on %s: accepted = %v", tt.url, got)
		}
	}
	var nilMeta *Metadata
	if nilMeta.Validate(false) == nil {
		t.Error("nil metadata validated")
	}
}
