package target

import (
	"strconv"
	"strings"
)

// HostPattern is one host an account's tokens may be sent to: an exact
// host ("api.github.com"), with a port when only that port is meant
// ("127.0.0.1:8443"), or every name under a domain ("*.googleapis.com",
// which does not match googleapis.com itself).
type HostPattern string

// ParseHostPattern checks p and returns it in canonical form (lower case).
func ParseHostPattern(p string) (HostPattern, error) {
	p = strings.ToLower(strings.TrimSpace(p))
	name, port, hasPort := p, "", false
	if i := strings.LastIndexByte(p, ':'); i >= 0 && !strings.Contains(p, "]") {
		name, port, hasPort = p[:i], p[i+1:], true
	}
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", invalid("a host's port must be 1 to 65535")
		}
	}
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		if hasPort || !strings.Contains(rest, ".") {
			return "", invalid("a wildcard host covers the names under a domain (*.example.com), without a port")
		}
		name = rest
	}
	if _, _, err := parseHost(name); err != nil {
		return "", err
	}
	return HostPattern(p), nil
}

// Matches reports whether the host u names is one the pattern covers.
func (p HostPattern) Matches(u URL) bool {
	s := string(p)
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		return strings.HasSuffix(u.Host, "."+rest)
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.HasSuffix(s, "]") {
		return u.Host == s[:i] && strconv.Itoa(u.Port) == s[i+1:]
	}
	return u.Host == strings.Trim(s, "[]")
}

// AnyMatches reports whether one of patterns covers u's host.
func AnyMatches(patterns []HostPattern, u URL) bool {
	for _, p := range patterns {
		if p.Matches(u) {
			return true
		}
	}
	return false
}
