// Package target reads the target of an HTTP request an agent names: the
// scheme, the host in one canonical form, the port and a checked path.
//
// It is the one reader of a request URL: the gateway parses the agent's
// arguments with it, the vault matches credential bindings against what it
// returns, and the executor sends exactly that. A URL that any of them would
// read differently is refused here, so a binding means what it says.
//
// # What Parse guarantees
//
//   - The scheme is https or http; there is a host, no user info, no
//     fragment.
//   - The host is a lower-case DNS name (ASCII letters, digits, '-' and
//     '_', no trailing dot, not ending in a number), a dotted-decimal IPv4
//     address, or a bracketed IPv6 address without a zone. Spellings that
//     resolvers read as an IPv4 address ("127.1", "0x7f.1", "2130706433",
//     "127.0.0.1.") are refused rather than guessed at.
//   - The port is a decimal number in 1..65535 without leading zeros.
//   - The URL as sent, escaped, is at most MaxLen bytes, like the input.
//   - The path has no "." or ".." segment in any spelling a server might
//     resolve: raw or percent-encoded (once or more), between "/", "\" or
//     their encodings, before a ";parameter"; and it decodes to UTF-8
//     without NUL.
//
// Errors wrap ErrInvalid and name the rule that failed, never the input.
package target

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalid: the URL is not one Yett sends. The error's text says which
// rule failed and is safe to show the agent.
var ErrInvalid = errors.New("target: invalid URL")

// MaxLen bounds the URL an agent may name.
const MaxLen = 8 << 10

// URL is a parsed request target. The zero value is not valid; only Parse
// makes one.
type URL struct {
	Scheme string // "https" or "http"
	// Host is the canonical host: a lower-case DNS name, or an IP address
	// as netip prints it (IPv6 without brackets).
	Host string
	// IP is the address when Host is an IP literal.
	IP netip.Addr
	// Port is the port the request goes to: the URL's, or the scheme's
	// default (443, 80).
	Port int
	// Path is the escaped path, "/" when the URL has none.
	Path string
	// RawQuery is the query without "?", with bytes outside visible ASCII
	// percent-encoded.
	RawQuery string
}

func invalid(rule string) error { return fmt.Errorf("%w: %s", ErrInvalid, rule) }

// Parse reads raw as a request target. See the package documentation for
// what it accepts.
func Parse(raw string) (URL, error) {
	if raw == "" || len(raw) > MaxLen || !utf8.ValidString(raw) {
		return URL{}, invalid(fmt.Sprintf("URL must be 1-%d bytes of UTF-8", MaxLen))
	}
	if strings.Contains(raw, "#") {
		return URL{}, invalid("URL must not have a fragment")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return URL{}, invalid("URL does not parse")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return URL{}, invalid("URL must be an absolute http or https URL")
	}
	if u.Opaque != "" || u.Host == "" {
		return URL{}, invalid("URL must be an absolute http or https URL")
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return URL{}, invalid("URL must not carry user information; Yett injects credentials")
	}
	t := URL{Scheme: u.Scheme}
	if t.Host, t.IP, t.Port, err = parseAuthority(u.Host, u.Scheme); err != nil {
		return URL{}, err
	}
	if t.Path, err = checkPath(u.EscapedPath()); err != nil {
		return URL{}, err
	}
	t.RawQuery = escapeQuery(u.RawQuery)
	// Escaping can triple a byte ("<" is "%3C"): the bound holds for the
	// URL that is sent, not only for the one the agent wrote.
	if len(t.String()) > MaxLen {
		return URL{}, invalid(fmt.Sprintf("URL must be at most %d bytes once escaped", MaxLen))
	}
	return t, nil
}

func defaultPort(scheme string) int {
	if scheme == "http" {
		return 80
	}
	return 443
}

// parseAuthority reads host[:port].
func parseAuthority(authority, scheme string) (string, netip.Addr, int, error) {
	host, portText := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		host, portText = authority[:i], authority[i+1:]
		if portText == "" {
			return "", netip.Addr{}, 0, invalid("URL port is empty")
		}
	}
	port := defaultPort(scheme)
	if portText != "" {
		n, err := strconv.Atoi(portText)
		if err != nil || n < 1 || n > 65535 || portText[0] < '1' || portText[0] > '9' {
			return "", netip.Addr{}, 0, invalid("URL port must be a number in 1..65535 without leading zeros")
		}
		port = n
	}
	h, ip, err := parseHost(host)
	return h, ip, port, err
}

func parseHost(host string) (string, netip.Addr, error) {
	if strings.HasPrefix(host, "[") {
		inner, ok := strings.CutSuffix(host[1:], "]")
		a, err := netip.ParseAddr(inner)
		if !ok || err != nil || !a.Is6() || a.Zone() != "" || strings.Contains(inner, "%") {
			return "", netip.Addr{}, invalid("URL host is not a valid IPv6 address (zones are not allowed)")
		}
		return a.String(), a, nil
	}
	if host == "" || strings.ContainsAny(host, "[]%") {
		return "", netip.Addr{}, invalid("URL host is not valid")
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		return a.String(), a, nil
	}
	host = strings.ToLower(host)
	if err := checkDNSName(host); err != nil {
		return "", netip.Addr{}, err
	}
	return host, netip.Addr{}, nil
}

// checkDNSName accepts a host name as resolvers and certificates read it:
// ASCII labels of 1-63 letters, digits, '-' (not at either end) and '_',
// at most 253 bytes, no trailing dot. A name whose last label is a number
// (decimal, or 0x hex) is what resolvers parse as an IPv4 address in
// another spelling, so it is refused (WHATWG URL "ends in a number").
func checkDNSName(h string) error {
	if len(h) > 253 {
		return invalid("URL host name is longer than 253 characters")
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return invalid("URL host name labels must be 1-63 characters, with no trailing dot")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return invalid("URL host name labels must not start or end with '-'")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return invalid("URL host must be an ASCII host name (IDNs in xn-- form) or an IP address")
			}
		}
	}
	if endsInNumber(labels[len(labels)-1]) {
		return invalid("URL host looks like an IPv4 address but is not one in dotted-decimal form")
	}
	return nil
}

func endsInNumber(l string) bool {
	if strings.Trim(l, "0123456789") == "" {
		return true
	}
	hex, ok := strings.CutPrefix(l, "0x")
	return ok && strings.Trim(hex, "0123456789abcdef") == ""
}

// escapeQuery percent-encodes the bytes of a query that do not belong on a
// request line as they are (controls, space, non-ASCII).
func escapeQuery(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Authority is host[:port] as it goes in the request: IPv6 in brackets,
// the port only when it is not the scheme's default.
func (t URL) Authority() string {
	h := t.Host
	if t.IP.Is6() {
		h = "[" + h + "]"
	}
	if t.Port != defaultPort(t.Scheme) {
		return h + ":" + strconv.Itoa(t.Port)
	}
	return h
}

// String is the URL to send.
func (t URL) String() string {
	s := t.Scheme + "://" + t.Authority() + t.Path
	if t.RawQuery != "" {
		s += "?" + t.RawQuery
	}
	return s
}
