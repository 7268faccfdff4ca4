package target

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxDecodes is how many layers of percent-encoding are looked through:
// some stacks decode twice (a proxy, then the application).
const maxDecodes = 3

// checkPath checks an escaped path: no dot segment in any spelling, and
// text that decodes to UTF-8 without NUL (an overlong "%c0%ae" is a dot
// to some decoders).
func checkPath(p string) (string, error) {
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		return "", invalid("URL path must start with /")
	}
	if hasDotSegment(p, 0) {
		return "", invalid(`URL path must not have "." or ".." segments, in any encoding`)
	}
	d, err := url.PathUnescape(p)
	if err != nil || !utf8.ValidString(d) || strings.ContainsRune(d, 0) {
		return "", invalid("URL path must decode to UTF-8 text without NUL")
	}
	return p, nil
}

// hasDotSegment reports whether s, read by a lenient server, has a "." or
// ".." segment: segments end at '/' and '\', a ";parameter" is dropped,
// and a segment holding percent-encoding is decoded (which may reveal
// separators) and read again, up to maxDecodes layers. Servers differ in
// whether they drop the parameter before or after decoding, so both the
// segment and its part before ';' are decoded: in ";%5C." the '\' that
// decoding reveals starts a new segment "." after the parameter.
func hasDotSegment(s string, depth int) bool {
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		head, _, cut := strings.Cut(seg, ";")
		if head == "." || head == ".." {
			return true
		}
		if depth >= maxDecodes || !strings.Contains(seg, "%") {
			continue
		}
		if decodedHasDotSegment(seg, depth) || cut && decodedHasDotSegment(head, depth) {
			return true
		}
	}
	return false
}

func decodedHasDotSegment(seg string, depth int) bool {
	d, err := url.PathUnescape(seg)
	return err == nil && d != seg && hasDotSegment(d, depth+1)
}
