package procid

import "strings"

// hiddenArg replaces an argument that looks like a secret.
const hiddenArg = "[hidden]"

// secretWords mark a flag or variable whose value is likely a secret.
var secretWords = []string{"token", "secret", "passw", "pwd", "key", "auth", "bearer", "cookie", "session", "credential", "private", "signature"}

// redactArgs hides what looks like a secret in argv before it is shown:
// the value of a flag or NAME=value whose name says secret (--token=x,
// --api-key x, GITHUB_TOKEN=x), the password of a URL, and any long
// token-like word (letters and digits, no path). It is a display
// precaution, best effort by nature: a command line that must stay
// private should not carry secrets at all.
func redactArgs(argv []string) []string {
	out := make([]string, len(argv))
	hideNext := false
	for i, a := range argv {
		switch {
		case hideNext && !strings.HasPrefix(a, "-"):
			a = hiddenArg
		case strings.Contains(a, "="):
			name, value, _ := strings.Cut(a, "=")
			if secretName(name) || tokenLike(value) {
				a = name + "=" + hiddenArg
			}
		case strings.HasPrefix(a, "-") && secretName(a):
			hideNext = true
			out[i] = a
			continue
		case tokenLike(a):
			a = hiddenArg
		}
		hideNext = false
		out[i] = redactURLPassword(a)
	}
	return out
}

func secretName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// tokenLike: at least 20 characters of the kinds API keys are made of,
// with both letters and digits, and not a path.
func tokenLike(s string) bool {
	if len(s) < 20 || strings.ContainsAny(s[:1], "/.~") {
		return false
	}
	letter, digit := false, false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letter = true
		case r >= '0' && r <= '9':
			digit = true
		case strings.ContainsRune("-_+/=.:", r):
		default:
			return false
		}
	}
	return letter && digit
}

// redactURLPassword hides the password of scheme://user:password@host.
func redactURLPassword(a string) string {
	scheme, rest, ok := strings.Cut(a, "://")
	if !ok {
		return a
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok || strings.ContainsAny(userinfo, "/?#") {
		return a
	}
	user, _, hasPass := strings.Cut(userinfo, ":")
	if !hasPass {
		return a
	}
	return scheme + "://" + user + ":" + hiddenArg + "@" + host
}
