package target

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	ok := []struct{ in, want, authority string }{
		{"https://API.Example.com/v1/x?a=1", "https://api.example.com/v1/x?a=1", "api.example.com"},
		{"https://api.example.com:443", "https://api.example.com/", "api.example.com"},
		{"http://127.0.0.1:8787/replay-test/x", "http://127.0.0.1:8787/replay-test/x", "127.0.0.1:8787"},
		{"http://[::1]:8080/a%2Fb", "http://[::1]:8080/a%2Fb", "[::1]:8080"},
		{"https://[0:0:0:0:0:ffff:7f00:1]/", "https://[::ffff:127.0.0.1]/", "[::ffff:127.0.0.1]"},
		{"https://h.example/caf\u00e9?q=caf\u00e9 x", "https://h.example/caf%C3%A9?q=caf%C3%A9%20x", "h.example"},
		{"https://h.example/a/.../b;x=1", "https://h.example/a/.../b;x=1", "h.example"},
		{"https://under_score.example:8443", "https://under_score.example:8443/", "under_score.example:8443"},
	}
	for _, c := range ok {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got.String() != c.want || got.Authority() != c.authority {
			t.Errorf("%s: got %s (%s), want %s (%s)", c.in, got, got.Authority(), c.want, c.authority)
		}
	}
	bad := []struct{ in, rule string }{
		{"", "1-"}, {"/relative", "absolute"}, {"ftp://h/x", "absolute"}, {"https:opaque", "absolute"},
		{"https://user:CANARY@h/", "user information"}, {"https://h/#frag", "fragment"}, {"https://h/#", "fragment"},
		{"http://127.0.0.1.:80/", "trailing dot"}, {"https://api.example.com./", "trailing dot"},
		{"http://127.1/", "dotted-decimal"}, {"http://0x7f.0.0.1/", "dotted-decimal"}, {"http://2130706433/", "dotted-decimal"},
		{"http://0x7f000001/", "dotted-decimal"}, {"http://127.000.000.001/", "dotted-decimal"},
		{"http://h:65536/", "port"}, {"http://h:0/", "port"}, {"http://h:080/", "port"}, {"http://h:/", "port is empty"},
		{"http://[fe80::1%25eth0]/", "IPv6"}, {"http://[::1/", "parse"}, {"http://b\u00fccher.example/", "ASCII"},
		{"http://-h.example/", "'-'"}, {"http://h..example/", "labels"},
		{"https://h/allowed/../admin", `".."`}, {"https://h/allowed/%2e%2e/admin", `".."`}, {"https://h/a/%2E%2e/b", `".."`},
		{"https://h/a/.%2e/b", `".."`}, {"https://h/a/..;/b", `".."`}, {"https://h/a/..%3B/b", `".."`},
		{"https://h/a%2f..%2fb", `".."`}, {"https://h/a/..%5cb", `".."`}, {`https://h/a/..\b`, `".."`},
		{"https://h/a/%252e%252e/b", `".."`}, {"https://h/a/%25252e%25252e/b", `".."`}, {"https://h/a/./b", `".."`},
		{"https://h/..", `".."`}, {`http://h/;\.`, `".."`}, {"https://h/;%5c../b", `".."`}, {"https://h/a;%2f../b", `".."`}, {"https://h/a/%c0%ae%c0%ae/b", "UTF-8"}, {"https://h/a%00b", "NUL"},
	}
	bad = append(bad,
		struct{ in, rule string }{"https://h/" + strings.Repeat("<", 3000), "once escaped"},
		struct{ in, rule string }{"https://h/?" + strings.Repeat(" ", 3000), "once escaped"})
	for _, c := range bad {
		_, err := Parse(c.in)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%q: %v, want ErrInvalid naming %q", c.in, err, c.rule)
		}
		if err != nil && strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%q: the error echoes the input", c.in)
		}
	}
}

// FuzzParse: whatever Parse accepts reads the same when parsed again, is a
// request net/http can send, and has no segment a lenient server would
// resolve away (decoded three times over, '\' as '/', ";params" dropped).
// Whatever it refuses is ErrInvalid without an echo of the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"https://api.example.com/v1/x?y=1", "http://127.0.0.1:8787/a", "http://[::1]:1/%2F", "https://h/a/..%2fb",
		"https://h/a/%252e./b", "http://127.0.0.1.:1/", "http://h:65536/", "https://u@h/", `https://h/a\..\b`,
		"https://h/a/..;/b", `http://h/;\.`, "https://h/%c0%ae/", "https://H.EXAMPLE:0443/?q=\u00e9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := Parse(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error of another kind: %v", err)
			}
			if len(raw) > 12 && strings.Contains(err.Error(), raw) {
				t.Fatalf("the error echoes the input: %v", err)
			}
			return
		}
		again, err := Parse(got.String())
		if err != nil || again != got {
			t.Fatalf("%q -> %q -> %+v, %v", raw, got.String(), again, err)
		}
		if got.Scheme != "https" && got.Scheme != "http" || got.Host == "" || got.Port < 1 || got.Port > 65535 {
			t.Fatalf("accepted %+v", got)
		}
		if _, err := http.NewRequest("GET", got.String(), nil); err != nil {
			t.Fatalf("net/http refuses %q: %v", got.String(), err)
		}
		p := got.Path
		for range 3 {
			if d, err := url.PathUnescape(p); err == nil {
				p = d
			}
		}
		for _, seg := range strings.FieldsFunc(strings.ReplaceAll(p, `\`, "/"), func(r rune) bool { return r == '/' }) {
			seg, _, _ = strings.Cut(seg, ";")
			if seg == "." || seg == ".." {
				t.Fatalf("%q: accepted a path a lenient server resolves: %q", raw, got.Path)
			}
		}
	})
}
