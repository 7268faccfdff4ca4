package proof

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ErrInvalidURL means a URL given to HTU or DPoPProof cannot be the target
// of an HTTP request. The error says why but never contains the URL, whose
// query may hold a secret.
var ErrInvalidURL = errors.New("proof: invalid request URL")

// HTU returns the htu claim for a request to rawURL (RFC 9449 §4.2, §4.3):
// the URL without query and fragment, normalised as RFC 9449 §4.3 asks a
// server to normalise before comparing (RFC 3986 §6.2.2 and §6.2.3):
// lowercase scheme and host, no default port, "/" for an empty path, dot
// segments removed, percent-encodings in uppercase hex and unreserved
// characters decoded.
//
// rawURL must be an absolute http or https URL with a host and without user
// information. Errors wrap ErrInvalidURL.
func HTU(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("%w: does not parse", ErrInvalidURL)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("%w: not an absolute http(s) URL", ErrInvalidURL)
	case u.Opaque != "" || u.Hostname() == "":
		return "", fmt.Errorf("%w: no host", ErrInvalidURL)
	case u.User != nil:
		return "", fmt.Errorf("%w: carries user information", ErrInvalidURL)
	}
	host := strings.ToLower(u.Hostname())
	if port := u.Port(); port != "" && !(scheme == "https" && port == "443") && !(scheme == "http" && port == "80") {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	path := removeDotSegments(normalizePercent(u.EscapedPath()))
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path, nil
}

// normalizePercent uppercases the hex of every percent-encoding and decodes
// those of unreserved characters (RFC 3986 §6.2.2.1, §6.2.2.2). The input is
// an escaped path that url.Parse accepted, so every '%' starts a valid
// triplet.
func normalizePercent(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || i+2 >= len(p) {
			b.WriteByte(p[i])
			continue
		}
		c := unhex(p[i+1])<<4 | unhex(p[i+2])
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(p[i+1 : i+3]))
		}
		i += 2
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// removeDotSegments is RFC 3986 §5.2.4 over an absolute path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	var out []string
	segs := strings.Split(p, "/")
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}
