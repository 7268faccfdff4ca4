package vault

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/yettdev/yett/backend/target"
)

// HostPattern is one parsed host binding: an exact host ("api.example.com",
// "127.0.0.1", "[::1]") or a wildcard over exactly one leftmost label
// ("*.example.com" matches "a.example.com", not "a.b.example.com" nor
// "example.com", as in TLS certificates), with an optional port.
//
// A pattern without a port matches the URL's default port only (no port,
// :443 or :80); naming a port binds that port alone. A credential for
// api.example.com must not flow to whatever listens on api.example.com:8080.
type HostPattern struct {
	Host     string // lower case; for a wildcard, the suffix after "*."
	Wildcard bool
	Port     int // 0: default port only
}

func (p HostPattern) String() string {
	h := p.Host
	if p.Wildcard {
		h = "*." + h
	}
	if p.Port != 0 {
		return h + ":" + strconv.Itoa(p.Port)
	}
	return h
}

// ParseHostPattern parses and validates a host binding. It accepts no
// scheme, path, user info or empty labels, and wildcards need at least two
// labels after "*." so "*.com" is refused.
func ParseHostPattern(s string) (HostPattern, error) {
	if s == "" {
		return HostPattern{}, errors.New("host is empty")
	}
	if len(s) > 260 {
		return HostPattern{}, errors.New("host is longer than 260 characters")
	}
	if strings.ContainsAny(s, "/@?#\\ \t\r\n") {
		return HostPattern{}, fmt.Errorf("host %q must be a bare host name (no scheme, path or user)", s)
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		return HostPattern{}, fmt.Errorf("host %q: %w", s, err)
	}
	p := HostPattern{Port: port}
	if strings.HasPrefix(host, "[") {
		addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		if err != nil || !addr.Is6() || !strings.HasSuffix(host, "]") {
			return HostPattern{}, fmt.Errorf("host %q: bad IPv6 literal", s)
		}
		p.Host = "[" + addr.String() + "]"
		return p, nil
	}
	host = strings.ToLower(host)
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		if strings.Count(rest, ".") < 1 {
			return HostPattern{}, fmt.Errorf("host %q: a wildcard needs at least two labels after \"*.\"", s)
		}
		p.Wildcard, host = true, rest
	}
	if strings.Contains(host, "*") {
		return HostPattern{}, fmt.Errorf("host %q: \"*\" is only allowed as the whole leftmost label", s)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if p.Wildcard || !addr.Is4() {
			return HostPattern{}, fmt.Errorf("host %q: bad IP address pattern", s)
		}
		p.Host = addr.String()
		return p, nil
	}
	if err := checkDNSName(host); err != nil {
		return HostPattern{}, fmt.Errorf("host %q: %w", s, err)
	}
	p.Host = host
	return p, nil
}

func splitHostPort(s string) (host string, port int, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || (strings.HasPrefix(s, "[") && i < strings.IndexByte(s, ']')) {
		return s, 0, nil
	}
	host, ps := s[:i], s[i+1:]
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return "", 0, errors.New("IPv6 addresses must be in brackets")
	}
	n, err := strconv.Atoi(ps)
	if err != nil || n < 1 || n > 65535 || ps[0] == '0' || ps[0] == '+' {
		return "", 0, fmt.Errorf("port %q is not a number in 1..65535", ps)
	}
	return host, n, nil
}

func checkDNSName(h string) error {
	if len(h) > 253 {
		return errors.New("name longer than 253 characters")
	}
	labels := strings.Split(h, ".")
	if last := labels[len(labels)-1]; last != "" && strings.Trim(last, "0123456789") == "" {
		return errors.New("looks like an IP address but is not a valid one")
	}
	for _, label := range labels {
		if label == "" || len(label) > 63 {
			return errors.New("each dot-separated label must be 1..63 characters")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("a label cannot start or end with '-'")
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("character %q is not allowed in a host name", c)
			}
		}
	}
	return nil
}

// match reports whether the pattern covers a request to reqHost (as
// bindingHost spells it) on reqPort, and how specifically: higher is more
// specific.
func (p HostPattern) match(reqHost string, reqPort int) (score int, ok bool) {
	if p.Port == 0 {
		if reqPort != 443 && reqPort != 80 {
			return 0, false
		}
	} else if reqPort != p.Port {
		return 0, false
	}
	portBonus := 0
	if p.Port != 0 {
		portBonus = 1
	}
	if !p.Wildcard {
		if reqHost != p.Host {
			return 0, false
		}
		return 1_000_000 + portBonus, true
	}
	label, rest, found := strings.Cut(reqHost, ".")
	if !found || label == "" || rest != p.Host {
		return 0, false
	}
	return len(p.Host)*2 + portBonus, true
}

// ParsePathPrefix validates a path binding: it starts with "/", has no
// query, fragment, whitespace, control characters or ".." segments.
func ParsePathPrefix(s string) (string, error) {
	if !strings.HasPrefix(s, "/") {
		return "", fmt.Errorf("path prefix %q must start with \"/\"", s)
	}
	if len(s) > 1024 {
		return "", errors.New("path prefix is longer than 1024 characters")
	}
	for _, c := range s {
		if c <= ' ' || c == 0x7f || c == '?' || c == '#' || c == '\\' {
			return "", fmt.Errorf("path prefix %q has a character that is not allowed (%q)", s, c)
		}
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == ".." || seg == "." {
			return "", fmt.Errorf("path prefix %q has a %q segment", s, seg)
		}
	}
	return s, nil
}

// pathMatch reports whether prefix covers path on segment boundaries:
// "/v1" covers "/v1" and "/v1/x", not "/v10".
func pathMatch(prefix, path string) bool {
	if prefix == "/" || path == prefix {
		return true
	}
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(path, prefix)
	}
	return strings.HasPrefix(path, prefix+"/")
}

// bindingHost is t's host as host patterns spell it: IPv6 in brackets.
func bindingHost(t target.URL) string {
	if t.IP.Is6() {
		return "[" + t.Host + "]"
	}
	return t.Host
}
