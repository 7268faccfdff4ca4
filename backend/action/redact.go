package action

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
)

// Redacted replaces every form of the injected secret in returned data.
const Redacted = "[REDACTED]"

// minSecret is the shortest secret the redactor looks for: a 1-3 byte
// "secret" would shred any text.
const minSecret = 4

// redactor finds the secret in returned data in every form a server's echo
// can give it, and replaces each with Redacted:
//
//   - as text, in any ASCII letter case, with any of its bytes escaped as a
//     URL (%XX), JSON (\u00XX, \", \\, \/), C or JavaScript (\xXX), HTML
//     (&#NN;, &#xNN;, &amp; ...) or form (+ for space) escape, mixed
//     freely: this covers the plain, URL-escaped and JSON-escaped forms;
//   - as hex, in any letter case;
//   - as base64 (standard or URL alphabet, padded or not) at each of the
//     three alignments, so base64 of "Bearer <secret>" and HTTP Basic's
//     base64(user:secret) are found whatever precedes the secret. The
//     characters that mix secret bits with a neighbour's go too.
//
// Matches are found in the original bytes and replaced together, so a
// replacement cannot join two halves into a new match. Compressed and
// partial answers never reach it: the executor decodes what it asked for
// and withholds the rest.
type redactor struct {
	secret []byte
	starts [256]bool // bytes a text match can start with
	hex    []byte    // lower-case hex of the secret
	b64    []b64Form
	maxLen int // the longest span one match can take
}

// b64Form is the run of base64 characters that depend on the secret alone
// at one alignment; mixedLeft/Right say whether the neighbouring character
// also holds secret bits.
type b64Form struct {
	core                  []byte
	mixedLeft, mixedRight bool
}

func newRedactor(secret []byte) *redactor {
	if len(secret) < minSecret {
		return nil
	}
	r := &redactor{secret: slices.Clone(secret), hex: []byte(hex.EncodeToString(secret))}
	for _, c := range []byte{lower(secret[0]), upper(secret[0]), '%', '\\', '&'} {
		r.starts[c] = true
	}
	if secret[0] == ' ' {
		r.starts['+'] = true
	}
	// One buffer for the padded secret and one for its encoding, each
	// cleared at the end: a temporary per alignment (and EncodeToString's
	// string) stayed in the heap as copies nothing could wipe.
	padded := make([]byte, 2+len(secret))
	enc := make([]byte, base64.StdEncoding.EncodedLen(len(padded)))
	for pad := 0; pad < 3; pad++ {
		in := padded[2-pad:]
		clear(in[:pad])
		copy(in[pad:], secret)
		e := enc[:base64.StdEncoding.EncodedLen(len(in))]
		base64.StdEncoding.Encode(e, in)
		bits := 8 * (pad + len(secret))
		from, to := []int{0, 2, 3}[pad], bits/6
		std := slices.Clone(e[from:to])
		for _, core := range [][]byte{std, toURLAlphabet(std)} {
			r.b64 = append(r.b64, b64Form{core: core, mixedLeft: pad > 0, mixedRight: bits%6 != 0})
		}
	}
	clear(padded)
	clear(enc)
	r.maxLen = len(secret) * len("&#x7e;")
	return r
}

func toURLAlphabet(s []byte) []byte {
	b := slices.Clone(s)
	for i, c := range b {
		switch c {
		case '+':
			b[i] = '-'
		case '/':
			b[i] = '_'
		}
	}
	return b
}

// wipe clears the redactor's copy of the secret and its encodings.
func (r *redactor) wipe() {
	if r == nil {
		return
	}
	clear(r.secret)
	clear(r.hex)
	for _, f := range r.b64 {
		clear(f.core)
	}
}

type span struct{ from, to int }

// spans returns every match in b, sorted and merged. With atEnd, a match
// cut short by the end of b (a prefix of a form) counts too: b is a
// truncated body and the rest of the secret was cut away.
func (r *redactor) spans(b []byte, atEnd bool) []span {
	var out []span
	for i := 0; i < len(b); i++ {
		if !r.starts[b[i]] {
			continue
		}
		if end, ok := r.matchText(b, i, atEnd); ok {
			out = append(out, span{i, end})
		}
	}
	out = append(out, foldedMatches(b, r.hex, atEnd)...)
	for _, f := range r.b64 {
		for _, s := range exactMatches(b, f.core, atEnd) {
			if f.mixedLeft && s.from > 0 && isBase64(b[s.from-1]) {
				s.from--
			}
			if f.mixedRight && s.to < len(b) && isBase64(b[s.to]) {
				s.to++
			}
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b span) int { return a.from - b.from })
	var merged []span
	for _, s := range out {
		if n := len(merged); n > 0 && s.from <= merged[n-1].to {
			merged[n-1].to = max(merged[n-1].to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// matchText matches the secret as text starting at b[i], each byte in any
// of its spellings, and returns where the longest match ends. The set of
// positions reachable after k bytes of the secret is carried forward, so an
// ambiguous spelling ('%' or "%25") costs no backtracking.
func (r *redactor) matchText(b []byte, i int, atEnd bool) (int, bool) {
	at := []int{i}
	for k := 0; k < len(r.secret); k++ {
		var next []int
		for _, p := range at {
			if p == len(b) && atEnd && k > 0 {
				return len(b), true
			}
			for _, sp := range spellings(b, p) {
				if foldEq(sp.c, r.secret[k]) && !slices.Contains(next, p+sp.n) {
					next = append(next, p+sp.n)
				}
			}
		}
		if len(next) == 0 {
			return 0, false
		}
		at = next
	}
	return slices.Max(at), true
}

type spelling struct {
	c byte
	n int
}

// spellings returns the bytes the text at b[p] may stand for and how long
// each spelling is.
func spellings(b []byte, p int) []spelling {
	if p >= len(b) {
		return nil
	}
	out := []spelling{{b[p], 1}}
	rest := b[p:]
	hexAt := func(from, n int) (byte, bool) {
		if len(rest) < from+n {
			return 0, false
		}
		v, err := hex.DecodeString(string(rest[from : from+n]))
		if err != nil || (n == 4 && v[0] != 0) {
			return 0, false
		}
		return v[len(v)-1], true
	}
	switch b[p] {
	case '+':
		out = append(out, spelling{' ', 1})
	case '%':
		if c, ok := hexAt(1, 2); ok {
			out = append(out, spelling{c, 3})
		}
	case '\\':
		if len(rest) >= 2 {
			switch rest[1] {
			case 'u':
				if c, ok := hexAt(2, 4); ok {
					out = append(out, spelling{c, 6})
				}
			case 'x':
				if c, ok := hexAt(2, 2); ok {
					out = append(out, spelling{c, 4})
				}
			case '"', '\\', '/', '\'':
				out = append(out, spelling{rest[1], 2})
			case 't':
				out = append(out, spelling{'\t', 2})
			}
		}
	case '&':
		out = append(out, entity(rest)...)
	}
	return out
}

var namedEntities = map[string]byte{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\''}

// entity reads an HTML character reference at the start of b.
func entity(b []byte) []spelling {
	end := bytes.IndexByte(b[:min(len(b), 8)], ';')
	if end < 2 {
		return nil
	}
	name := string(b[1:end])
	if c, ok := namedEntities[name]; ok {
		return []spelling{{c, end + 1}}
	}
	if name[0] != '#' {
		return nil
	}
	v, base := name[1:], 10
	if len(v) > 0 && (v[0] == 'x' || v[0] == 'X') {
		v, base = v[1:], 16
	}
	n := 0
	for _, c := range []byte(v) {
		d := hexDigit(c)
		if d < 0 || d >= base {
			return nil
		}
		n = n*base + d
		if n > 0xff {
			return nil
		}
	}
	if v == "" {
		return nil
	}
	return []spelling{{byte(n), end + 1}}
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func foldEq(a, b byte) bool { return lower(a) == lower(b) }

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// exactMatches finds needle in b; with atEnd, also a prefix of it that
// ends b.
func exactMatches(b, needle []byte, atEnd bool) []span {
	var out []span
	for i := 0; ; {
		j := bytes.Index(b[i:], needle)
		if j < 0 {
			break
		}
		out = append(out, span{i + j, i + j + len(needle)})
		i += j + 1
	}
	if atEnd {
		for k := min(len(needle)-1, len(b)); k > 0; k-- {
			if bytes.HasSuffix(b, needle[:k]) {
				out = append(out, span{len(b) - k, len(b)})
				break
			}
		}
	}
	return out
}

// foldedMatches is exactMatches ignoring ASCII letter case; needle is
// lower case.
func foldedMatches(b, needle []byte, atEnd bool) []span {
	var out []span
	n := len(needle)
	for i := 0; i+n <= len(b); i++ {
		if foldEq(b[i], needle[0]) && equalFold(b[i:i+n], needle) {
			out = append(out, span{i, i + n})
		}
	}
	if atEnd {
		for k := min(n-1, len(b)); k > 0; k-- {
			if equalFold(b[len(b)-k:], needle[:k]) {
				out = append(out, span{len(b) - k, len(b)})
				break
			}
		}
	}
	return out
}

func equalFold(a, b []byte) bool {
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// redact returns b with every span replaced by Redacted.
func redact(b []byte, spans []span) []byte {
	if len(spans) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	for _, s := range spans {
		out = append(out, b[last:s.from]...)
		out = append(out, Redacted...)
		last = s.to
	}
	return append(out, b[last:]...)
}

func (r *redactor) bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	return redact(b, r.spans(b, false))
}

func (r *redactor) string(s string) string {
	if r == nil {
		return s
	}
	return string(r.bytes([]byte(s)))
}

// header returns a copy of h with names and values redacted.
func (r *redactor) header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		k = r.string(k)
		for _, v := range vs {
			out[k] = append(out[k], r.string(v))
		}
	}
	return out
}

// tail redacts b, a body cut at the response cap, also where its last
// bytes could be the start of the secret in any form.
func (r *redactor) tail(b []byte) []byte {
	if r == nil {
		return b
	}
	return redact(b, r.spans(b, true))
}

// Redact returns b with every form of each secret (of at least 4 bytes)
// replaced by Redacted: the same finder that cleans HTTP answers, for data
// that comes back another way (an upstream MCP server's tool result).
// Matches of all secrets are found in the original bytes and replaced
// together.
func Redact(b []byte, secrets ...[]byte) []byte {
	var spans []span
	for _, s := range secrets {
		r := newRedactor(s)
		if r == nil {
			continue
		}
		spans = append(spans, r.spans(b, false)...)
		r.wipe()
	}
	if len(spans) == 0 {
		return b
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	merged := spans[:1]
	for _, s := range spans[1:] {
		last := &merged[len(merged)-1]
		if s.from <= last.to {
			last.to = max(last.to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	return redact(b, merged)
}
