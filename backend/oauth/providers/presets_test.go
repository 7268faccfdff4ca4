package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/presets.golden.json")

const testTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

// resolved returns p ready for use: Microsoft's with a GUID tenant.
func resolved(t *testing.T, p Preset) Preset {
	t.Helper()
	if !p.Tenant {
		return p
	}
	r, err := ResolveTenant(p, testTenant)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPresetsValidate(t *testing.T) {
	ids := map[string]bool{}
	for _, p := range Presets() {
		t.Run(p.ID, func(t *testing.T) {
			if ids[p.ID] {
				t.Fatal("duplicate ID")
			}
			ids[p.ID] = true
			if p.Name == "" || p.Notes == "" {
				t.Error("missing Name or Notes")
			}
			if p.Tenant {
				if err := p.Metadata.Validate(true); err == nil {
					t.Error("unresolved {tenant} validated")
				}
			}
			p = resolved(t, p)
			if err := p.Metadata.Validate(true); err != nil {
				t.Fatal(err)
			}
			if p.Metadata.AuthorizationEndpoint == "" {
				t.Error("no authorization endpoint")
			}
			for _, m := range p.Metadata.CodeChallengeMethodsSupported {
				if m != "S256" {
					t.Errorf("preset offers PKCE method %q", m)
				}
			}
			if p.Discovery != "" {
				if p.Discovery != p.Metadata.Issuer {
					t.Errorf("Discovery %q is not the preset's issuer %q", p.Discovery, p.Metadata.Issuer)
				}
				if err := checkURL("discovery", p.Discovery, true); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for _, want := range []string{"github", "google", "gitlab", "microsoft", "slack", "atlassian"} {
		if _, ok := Lookup(want); !ok {
			t.Errorf("Lookup(%q) missing", want)
		}
	}
	if _, ok := Lookup("GitHub"); ok {
		t.Error("Lookup is case-insensitive; IDs are exact")
	}
}

// The preset table is a wire format for backend/oauth: a change to it must
// be deliberate. Run with -update to accept one.
func TestPresetsGolden(t *testing.T) {
	got, err := json.MarshalIndent(Presets(), "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "presets.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("presets differ from %s; run go test -run TestPresetsGolden -update to accept", path)
	}
}

func TestPresetsAreCopies(t *testing.T) {
	p, _ := Lookup("google")
	p.DefaultScopes[0] = "changed"
	p.AuthParams["access_type"] = "online"
	p.Metadata.GrantTypesSupported[0] = "changed"
	again, _ := Lookup("google")
	if again.DefaultScopes[0] == "changed" || again.AuthParams["access_type"] != "offline" ||
		again.Metadata.GrantTypesSupported[0] == "changed" {
		t.Fatal("a caller's change leaked into the table")
	}
}

func TestResolveTenant(t *testing.T) {
	ms, ok := Lookup("microsoft")
	if !ok {
		t.Fatal("no microsoft preset")
	}
	tests := []struct {
		tenant     string
		inURL      string // "" means refused
		keepIssuer bool
	}{
		{testTenant, testTenant, true},
		{strings.ToUpper(testTenant), testTenant, true},
		{"common", "common", false},
		{"organizations", "organizations", false},
		{"consumers", "consumers", false},
		{"contoso.onmicrosoft.com", "contoso.onmicrosoft.com", false},
		{"Contoso.COM", "contoso.com", false},
		{"", "", false},
		{"Common", "", false},
		{"contoso", "", false},
		{"../common", "", false},
		{"common/oauth2", "", false},
		{"evil.example/x", "", false},
		{"evil.example?x", "", false},
		{"evil.example#", "", false},
		{"a..b", "", false},
		{"-a.com", "", false},
		{"127.0.0.1", "", false},
		{"{tenant}", "", false},
		{testTenant[:35] + "g", "", false},
		{strings.Repeat("a.", 130) + "com", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.tenant, func(t *testing.T) {
			p, err := ResolveTenant(ms, tt.tenant)
			if tt.inURL == "" {
				if !errors.Is(err, ErrInvalidTenant) {
					t.Fatalf("err = %v, want ErrInvalidTenant", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantToken := "https://login.microsoftonline.com/" + tt.inURL + "/oauth2/v2.0/token"
			if p.Metadata.TokenEndpoint != wantToken {
				t.Errorf("token endpoint = %q, want %q", p.Metadata.TokenEndpoint, wantToken)
			}
			if p.Tenant {
				t.Error("resolved preset still says Tenant")
			}
			if err := p.Metadata.Validate(true); err != nil {
				t.Error(err)
			}
			if got := p.Metadata.Issuer != "" && p.Discovery != ""; got != tt.keepIssuer {
				t.Errorf("issuer %q, discovery %q: kept = %v, want %v", p.Metadata.Issuer, p.Discovery, got, tt.keepIssuer)
			}
		})
	}
	if ms.Metadata.TokenEndpoint != "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token" {
		t.Error("ResolveTenant changed its argument")
	}
	gh, _ := Lookup("github")
	if _, err := ResolveTenant(gh, "common"); !errors.Is(err, ErrNoTenant) {
		t.Errorf("github: err = %v, want ErrNoTenant", err)
	}
}
