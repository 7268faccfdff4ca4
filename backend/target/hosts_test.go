package target

import "testing"

func TestHostPatterns(t *testing.T) {
	cases := []struct {
		pattern string
		url     string
		want    bool
	}{
		{"api.github.com", "https://api.github.com/repos", true},
		{"api.github.com", "https://API.GitHub.com/repos", true},
		{"api.github.com", "https://api.github.com:8443/x", true},
		{"api.github.com", "https://api.github.com.evil.example/x", false},
		{"api.github.com", "https://github.com/x", false},
		{"*.googleapis.com", "https://www.googleapis.com/x", true},
		{"*.googleapis.com", "https://googleapis.com/x", false},
		{"*.googleapis.com", "https://evilgoogleapis.com/x", false},
		{"127.0.0.1:8443", "https://127.0.0.1:8443/x", true},
		{"127.0.0.1:8443", "https://127.0.0.1:9443/x", false},
		{"127.0.0.1", "http://127.0.0.1:9000/x", true},
	}
	for _, c := range cases {
		p, err := ParseHostPattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		u, err := Parse(c.url)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if got := p.Matches(u); got != c.want {
			t.Errorf("%s matches %s: %v, want %v", c.pattern, c.url, got, c.want)
		}
	}
	for _, bad := range []string{"", "*.com", "*.example.com:443", "a b", "host:0", "host:99999", "ex ample.com", "127.1"} {
		if _, err := ParseHostPattern(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
