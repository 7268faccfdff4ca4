package action

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// secretForms is every encoding of secret an echo might return, by name;
// prefix shifts base64's alignment as "Bearer " or Basic's "user:" do.
func secretForms(secret, prefix string) map[string]string {
	js, _ := json.Marshal(secret)
	var full strings.Builder
	for _, c := range []byte(secret) {
		fmt.Fprintf(&full, `\u%04X`, c)
	}
	var pct strings.Builder
	for _, c := range []byte(secret) {
		fmt.Fprintf(&pct, "%%%02x", c)
	}
	return map[string]string{
		"plain": secret, "upper": strings.ToUpper(secret), "hex": hex.EncodeToString([]byte(secret)),
		"HEX": strings.ToUpper(hex.EncodeToString([]byte(secret))), "json": string(js), "json-all": full.String(),
		"query": url.QueryEscape(secret), "path": url.PathEscape(secret), "pct-all": pct.String(),
		"html": html.EscapeString(secret), "base64": base64.StdEncoding.EncodeToString([]byte(prefix + secret)),
		"base64url": base64.RawURLEncoding.EncodeToString([]byte(prefix + secret)),
		"basic":     base64.StdEncoding.EncodeToString([]byte("bot:" + secret)),
	}
}

// leakedForm names a form of secret still readable in out, after every
// Redacted marker is replaced by a NUL (which no form contains), or "".
func leakedForm(out []byte, secret string) string {
	masked := bytes.ReplaceAll(out, []byte(Redacted), []byte{0})
	lower := bytes.ToLower(masked)
	for _, f := range []string{secret, hex.EncodeToString([]byte(secret))} {
		if bytes.Contains(lower, bytes.ToLower([]byte(f))) {
			return "text or hex " + f
		}
	}
	var all strings.Builder
	for _, c := range []byte(secret) {
		fmt.Fprintf(&all, `\u%04x`, c)
	}
	if bytes.Contains(lower, []byte(all.String())) {
		return "json-escaped"
	}
	for pad := 0; pad < 3; pad++ {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, pad), secret...))
		from, to := []int{0, 2, 3}[pad], 8*(pad+len(secret))/6
		core := enc[from:to]
		for _, c := range []string{core, strings.NewReplacer("+", "-", "/", "_").Replace(core)} {
			if bytes.Contains(masked, []byte(c)) {
				return fmt.Sprintf("base64 at offset %d", pad)
			}
		}
	}
	return ""
}

func TestRedactorForms(t *testing.T) {
	for _, secret := range []string{canary, `p@ss w/"q"<&>\x+%25`, "ABCD"} {
		for _, prefix := range []string{"", "Bearer ", "x:"} {
			for name, form := range secretForms(secret, prefix) {
				body := []byte("before " + form + " after")
				out := newRedactor([]byte(secret)).bytes(body)
				if leak := leakedForm(out, secret); leak != "" {
					t.Errorf("%q form %s (prefix %q): %s survives in %q", secret, name, prefix, leak, out)
				}
				if !bytes.Contains(out, []byte(Redacted)) {
					t.Errorf("%q form %s: nothing redacted in %q", secret, name, out)
				}
			}
		}
	}
	// Text that is not the secret is left alone.
	if out := newRedactor([]byte(canary)).bytes([]byte("CANARY-yett is a bird; %43 &amp; \\u0043")); bytes.Contains(out, []byte(Redacted)) {
		t.Errorf("redacted text that is not the secret: %q", out)
	}
}

func TestRedactorTail(t *testing.T) {
	r := newRedactor([]byte(canary))
	for _, body := range []string{"xx" + canary[:5], "xx" + hex.EncodeToString([]byte(canary))[:7], "xx%43%41%4e"} {
		if out := r.tail([]byte(body)); !bytes.HasSuffix(out, []byte(Redacted)) {
			t.Errorf("cut secret survives at the end: %q", out)
		}
	}
}

// FuzzRedactor: for any body and any secret, an encoding of the secret
// placed anywhere in the body does not survive redaction, in any form.
func FuzzRedactor(f *testing.F) {
	f.Add([]byte("hello world"), "CANARY-yett-7f3c9a1e5b", uint8(0), uint16(3), uint8(7))
	f.Add([]byte(`{"a":"b"}`), `s3cr"t\/<x>`, uint8(4), uint16(5), uint8(1))
	f.Add([]byte{}, "0123456789", uint8(10), uint16(0), uint8(2))
	f.Add([]byte("%%%%%%%%"), "%%%%%%%%%", uint8(8), uint16(4), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, secret string, which uint8, pos uint16, prefixLen uint8) {
		if len(secret) < 8 || len(secret) > 64 {
			return
		}
		for _, c := range []byte(secret) {
			if c < 0x20 || c > 0x7e {
				return // a header value: visible ASCII and space
			}
		}
		forms := secretForms(secret, strings.Repeat("z", int(prefixLen%6)))
		names := make([]string, 0, len(forms))
		for n := range forms {
			names = append(names, n)
		}
		// Map iteration order is random; pick by sorted name.
		slices.Sort(names)
		form := forms[names[int(which)%len(names)]]
		at := int(pos) % (len(body) + 1)
		in := append(append(append([]byte{}, body[:at]...), form...), body[at:]...)
		out := newRedactor([]byte(secret)).bytes(in)
		if leak := leakedForm(out, secret); leak != "" {
			t.Fatalf("secret %q as %s in %q: %s survives in %q", secret, names[int(which)%len(names)], in, leak, out)
		}
	})
}

// BenchmarkRedact8MiB: redacting a body at the response cap, plain JSON-ish
// text and the worst case of text made of escape starts.
func BenchmarkRedact8MiB(b *testing.B) {
	r := newRedactor([]byte(canary))
	for name, unit := range map[string]string{"text": `{"id":42,"name":"Ada Lovelace","tags":["x","y"]} `, "escapes": `%4\u00&#x\`} {
		body := bytes.Repeat([]byte(unit), (8<<20)/len(unit))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r.bytes(body)
			}
		})
	}
}
