package sshaction

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"

	xssh "golang.org/x/crypto/ssh"
)

// Errors of host key parsing. Their texts never quote the input.
var (
	ErrNoHostKey      = errors.New("ssh: no host key found (paste a known_hosts line, an ssh-keyscan line or a public key)")
	ErrHostKeyType    = errors.New("ssh: Yett pins ssh-ed25519, ecdsa-sha2-nistp256/384/521 and ssh-rsa host keys")
	ErrHostKeyMarker  = errors.New("ssh: @cert-authority and @revoked lines are not host keys Yett can pin")
	ErrHostKeysTooBig = errors.New("ssh: the host key text is too long")
)

// Bounds on host key input.
const (
	maxPinText      = 256 << 10 // a pasted block
	maxKnownHosts   = 4 << 20   // a person's known_hosts file
	MaxPins         = 16
	maxPinLineBytes = 16 << 10
)

// pinnableTypes are the host key types Yett pins, with the signature
// algorithms each allows in HostKeyAlgorithms. ssh-rsa keys sign with
// SHA-2 only.
var pinnableTypes = map[string][]string{
	xssh.KeyAlgoED25519:  {xssh.KeyAlgoED25519},
	xssh.KeyAlgoECDSA256: {xssh.KeyAlgoECDSA256},
	xssh.KeyAlgoECDSA384: {xssh.KeyAlgoECDSA384},
	xssh.KeyAlgoECDSA521: {xssh.KeyAlgoECDSA521},
	xssh.KeyAlgoRSA:      {xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256},
}

// Pin is one pinned host key.
type Pin struct{ key xssh.PublicKey }

// ParsePin reads a pin as Yett stores it: "type base64".
func ParsePin(line string) (Pin, error) {
	k, _, _, _, err := xssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return Pin{}, ErrNoHostKey
	}
	if _, ok := pinnableTypes[k.Type()]; !ok {
		return Pin{}, ErrHostKeyType
	}
	return Pin{key: k}, nil
}

// PinOf pins a key a server presented (trust on first use).
func PinOf(k xssh.PublicKey) (Pin, error) {
	if _, ok := pinnableTypes[k.Type()]; !ok {
		return Pin{}, ErrHostKeyType
	}
	return Pin{key: k}, nil
}

// String is the stored form: "type base64", no comment.
func (p Pin) String() string { return strings.TrimSpace(string(xssh.MarshalAuthorizedKey(p.key))) }

// Fingerprint is "SHA256:...", as ssh-keygen -l prints it.
func (p Pin) Fingerprint() string { return xssh.FingerprintSHA256(p.key) }

// Type is the key's type ("ssh-ed25519").
func (p Pin) Type() string { return p.key.Type() }

func (p Pin) matches(k xssh.PublicKey) bool {
	return p.key != nil && bytes.Equal(p.key.Marshal(), k.Marshal())
}

// HostKeyAlgorithms lists the algorithms the pins allow, in their order.
func HostKeyAlgorithms(pins []Pin) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pins {
		for _, a := range pinnableTypes[p.Type()] {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// ParsePins reads host keys a person pasted: known_hosts lines (the host
// names are ignored: the person chose the host), ssh-keyscan output, or
// public key lines. Blank lines and # comments are skipped; a line that is
// none of these is an error, so nothing pasted is silently dropped. The
// result has no duplicates.
//
// Errors: ErrNoHostKey, ErrHostKeyType, ErrHostKeyMarker, ErrHostKeysTooBig,
// and a line-numbered error wrapping one of them.
func ParsePins(text string) ([]Pin, error) {
	if len(text) > maxPinText {
		return nil, ErrHostKeysTooBig
	}
	var out []Pin
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, err := parsePinLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = addPin(out, p)
	}
	if len(out) == 0 {
		return nil, ErrNoHostKey
	}
	if len(out) > MaxPins {
		return nil, fmt.Errorf("%w: at most %d host keys", ErrHostKeysTooBig, MaxPins)
	}
	return out, nil
}

func parsePinLine(line string) (Pin, error) {
	if len(line) > maxPinLineBytes {
		return Pin{}, ErrHostKeysTooBig
	}
	if strings.HasPrefix(line, "@") {
		return Pin{}, ErrHostKeyMarker
	}
	// A public key line first: its first field is a key type, which a
	// known_hosts host pattern never is.
	if k, _, _, _, err := xssh.ParseAuthorizedKey([]byte(line)); err == nil {
		return PinOf(k)
	}
	_, _, k, _, _, err := xssh.ParseKnownHosts([]byte(line))
	if err != nil {
		return Pin{}, ErrNoHostKey
	}
	return PinOf(k)
}

func addPin(pins []Pin, p Pin) []Pin {
	for _, q := range pins {
		if q.matches(p.key) {
			return pins
		}
	}
	return append(pins, p)
}

// FromKnownHosts returns the keys a known_hosts file pins for host:port:
// lines whose patterns name it (plain, [host]:port, hashed |1|salt|hash,
// * and ? wildcards, !negation), without a marker. Keys of types Yett does
// not pin and lines it cannot read are skipped, as ssh skips them; skipped
// counts them so the person is told.
//
// Errors: ErrHostKeysTooBig.
func FromKnownHosts(data []byte, host string, port int) (pins []Pin, skipped int, err error) {
	if len(data) > maxKnownHosts {
		return nil, 0, ErrHostKeysTooBig
	}
	names := hostNames(host, port)
	for _, raw := range bytes.Split(data, []byte("\n")) {
		line := bytes.TrimSpace(raw)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if len(line) > maxPinLineBytes {
			skipped++
			continue
		}
		marker, hosts, k, _, _, err := xssh.ParseKnownHosts(line)
		if err != nil {
			skipped++
			continue
		}
		if !patternsMatch(hosts, names) {
			continue
		}
		if marker != "" {
			skipped++
			continue
		}
		p, err := PinOf(k)
		if err != nil {
			skipped++
			continue
		}
		pins = addPin(pins, p)
		if len(pins) > MaxPins {
			return nil, skipped, fmt.Errorf("%w: at most %d host keys", ErrHostKeysTooBig, MaxPins)
		}
	}
	return pins, skipped, nil
}

// hostNames are the forms of host:port a known_hosts pattern is matched
// against, as OpenSSH writes them: "host" for port 22, else "[host]:port".
func hostNames(host string, port int) []string {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if port == 22 || port == 0 {
		return []string{host}
	}
	return []string{"[" + host + "]:" + strconv.Itoa(port)}
}

// patternsMatch applies one line's host patterns: any negated match
// excludes the line, else any positive match includes it.
func patternsMatch(patterns []string, names []string) bool {
	matched := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		for _, n := range names {
			if patternMatches(p, n) {
				if neg {
					return false
				}
				matched = true
			}
		}
	}
	return matched
}

func patternMatches(pattern, name string) bool {
	if strings.HasPrefix(pattern, "|1|") {
		return hashedMatches(pattern, name)
	}
	pattern = strings.ToLower(pattern)
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == name
	}
	// known_hosts wildcards are * and ?; path.Match also knows [ and \,
	// which known_hosts does not, so a pattern with them matches literally.
	if strings.ContainsAny(pattern, `[\`) {
		return pattern == name
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// hashedMatches checks a HashKnownHosts entry: |1|base64(salt)|base64(HMAC-SHA1(salt, name)).
func hashedMatches(pattern, name string) bool {
	parts := strings.Split(pattern, "|")
	if len(parts) != 4 || parts[0] != "" || parts[1] != "1" {
		return false
	}
	salt, err1 := base64.StdEncoding.DecodeString(parts[2])
	want, err2 := base64.StdEncoding.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(want) != sha1.Size {
		return false
	}
	m := hmac.New(sha1.New, salt)
	m.Write([]byte(name))
	return hmac.Equal(m.Sum(nil), want)
}

// CheckAddress checks a host address a person entered: a DNS name or an IP
// address, nothing that could carry a user, port or option.
func CheckAddress(addr string) error {
	bad := errors.New("address must be a host name or an IP address (no user@, port or spaces)")
	if addr == "" || len(addr) > 253 || strings.HasPrefix(addr, "-") {
		return bad
	}
	if net.ParseIP(addr) != nil {
		return nil
	}
	for _, label := range strings.Split(strings.TrimSuffix(addr, "."), ".") {
		if label == "" || len(label) > 63 {
			return bad
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return bad
			}
		}
	}
	return nil
}
