package action

import (
	"bytes"
	"net/http"
	"sort"
)

// Redacted replaces every form of the injected secret in returned data.
const Redacted = "[REDACTED]"

// redactor removes the secret's forms from anything returned to the agent.
type redactor struct {
	needles [][]byte // longest first, so a longer form is removed whole
	maxLen  int
}

func newRedactor(forms []string) *redactor {
	r := &redactor{}
	seen := map[string]bool{}
	for _, f := range forms {
		if len(f) < 4 || seen[f] { // a 1-3 byte "secret" would shred any text
			continue
		}
		seen[f] = true
		r.needles = append(r.needles, []byte(f))
		r.maxLen = max(r.maxLen, len(f))
	}
	sort.Slice(r.needles, func(i, j int) bool { return len(r.needles[i]) > len(r.needles[j]) })
	return r
}

func (r *redactor) bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	for _, n := range r.needles {
		b = bytes.ReplaceAll(b, n, []byte(Redacted))
	}
	return b
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

// tail trims a possible partial secret at the end of a truncated body: if
// the last bytes are a prefix of a needle, they could be the start of the
// secret cut by the cap.
func (r *redactor) tail(b []byte) []byte {
	if r == nil {
		return b
	}
	for _, n := range r.needles {
		for k := min(len(n)-1, len(b)); k > 0; k-- {
			if bytes.HasSuffix(b, n[:k]) {
				b = append(b[:len(b)-k:len(b)-k], Redacted...)
				break
			}
		}
	}
	return b
}
