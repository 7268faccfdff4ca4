package action

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzValidate drives the agent-argument checks with arbitrary method, URL
// and header. Whatever it accepts must be safe to send: http(s), a host,
// no user info, no reserved header, header values without line breaks.
func FuzzValidate(f *testing.F) {
	f.Add("GET", "https://api.example.com/v1/x?y=1", "X-Replay-Test-Id", "fresh-1", false)
	f.Add("POST", "http://127.0.0.1:8787/replay-test/locked-3d4a", "authorization", "Bearer x", true)
	f.Add("get", "https://user:pw@host/", "Cookie", "a=b", true)
	f.Add("PUT", "file:///etc/passwd", "X-A", "v\r\nHost: evil", false)
	f.Add("DELETE", "https://[fe80::1%25eth0]/", "Content-Length", "0", false)
	f.Add("CONNECT", "//host/path", "X-Api-Key", "k", true)
	f.Add("GET", "https://host:99999/", "", "", false)
	f.Fuzz(func(t *testing.T, method, rawURL, name, value string, withCred bool) {
		var inj *Injection
		if withCred {
			inj = &Injection{Format: InjectHeader, HeaderName: "X-Api-Key"}
		}
		headers := map[string]string{}
		if name != "" {
			headers[name] = value
		}
		v, err := Request{Method: method, URL: rawURL, Headers: headers}.validate(inj)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) && !errors.Is(err, ErrForbiddenHeader) {
				t.Fatalf("unexpected error class: %v", err)
			}
			if value != "" && len(value) > 3 && strings.Contains(err.Error(), value) {
				t.Fatalf("error echoes the header value: %v", err)
			}
			return
		}
		if v.url.Scheme != "https" && v.url.Scheme != "http" {
			t.Fatalf("accepted scheme %q", v.url.Scheme)
		}
		if v.url.User != nil || v.target.Host == "" || v.url.Host == "" {
			t.Fatalf("accepted URL %q", v.url)
		}
		if !allowedMethods[v.method] {
			t.Fatalf("accepted method %q", v.method)
		}
		if _, err := http.NewRequest(v.method, v.url.String(), nil); err != nil {
			t.Fatalf("accepted URL that net/http refuses: %q: %v", v.url, err)
		}
		for k, vs := range v.header {
			if neverFromAgent[k] || (withCred && (neverOnCredentialed[k] || k == "X-Api-Key")) {
				t.Fatalf("accepted reserved header %q", k)
			}
			for _, x := range vs {
				if !httpguts.ValidHeaderFieldValue(x) || strings.ContainsAny(x, "\r\n") {
					t.Fatalf("accepted header value %q", x)
				}
			}
		}
	})
}

// FuzzPolicyCheck: no address in a refused range passes, however spelled.
func FuzzPolicyCheck(f *testing.F) {
	for _, s := range []string{"169.254.169.254", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "fe80::1", "fd00:ec2::254", "127.0.0.1", "8.8.8.8", "::1", "0.0.0.0",
		"::127.0.0.1", "2002:a9fe:a9fe::", "64:ff9b:1:a9fe:a9:fe00::", "2001:0:4136:e378:8000:63bf:5601:5601", "2001:db8::5efe:10.0.0.1", "::ffff:0:a9fe:a9fe"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, host string, internalOK bool) {
		v, err := Request{URL: "https://[" + host + "]/"}.validate(nil)
		if err != nil {
			v, err = Request{URL: "https://" + host + "/"}.validate(nil)
		}
		if err != nil {
			return
		}
		a := v.target.IP
		if !a.IsValid() {
			return
		}
		if (policy{allowInternal: internalOK}).check(a) == nil {
			for _, e := range embedded(a) {
				if inAny(e, alwaysRefused) || e.IsLinkLocalUnicast() || (!internalOK && inAny(e, internal)) {
					t.Fatalf("%s (%s) passed the policy", host, e)
				}
			}
		}
	})
}
